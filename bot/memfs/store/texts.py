"""What opening a memory repository, reading it and checking its changes say."""

from __future__ import annotations

# memrepo's own rules.
BAD_CONFIG = ".memrepo/config.yml: {problem}"

# Opening a repository.
REPO_MISSING = "no memory repository at {path}: the folder does not exist (create one with `memrepo init {path}`)"
REPO_NOT_DIR = "{path} is a file, not a memory repository folder"
REPO_NOT_GIT = "{path} is not a git repository (create a memory repository with `memrepo init`)"
GIT_COMMAND_FAILED = "git {command} failed in {path}: {problem}"
GIT_NO_OBJECT = "git has no object {oid} in {path}"
REPO_BARE = "{path} is a bare git repository; give the path of a memory repository's working clone"
REPO_NOT_MEMORY = (
    "{path} is a git repository but not a memory repository (it has no system/, root MEMORY.md or "
    ".memrepo/, and Letta Code did not make it); run `memrepo init` in an empty folder"
)
REPO_LOCKED = "another memrepo writer has held {path} for too long; try again in a moment"
HEAD_MOVED = "the repository's HEAD moved while this change was being made; nothing was changed, try again"

# Validating one.
VALIDATE_NO_SUCH_PATH = "{path} does not exist in the working tree or at HEAD"
VALIDATE_NO_BASE = "{base} is not a commit or branch of this repository (fetch it first?)"
