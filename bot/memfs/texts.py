"""What the memory core says that no one of its folders owns: how a memory begins (`create`,
`clone`), the front door's refusal, and the sentences several folders (and callers outside
the core) say. Each folder says the rest from its own texts module (format/texts.py,
tool/texts.py, sync/texts.py, ...)."""

from __future__ import annotations

# The front door (__init__.py) asked for a name it does not export, in Python's own words.
NO_ATTRIBUTE = "module {module!r} has no attribute {name!r}"

# Opening a repository.
REPO_NO_COMMITS = "{path} has no commits yet; `memrepo init` makes the first one"

# The memory tool.
NO_AGENT_ID = (
    "no agent id: pass --agent-id (or agent_id=) or set one with "
    "`memrepo init --agent-id ID` / `git config memrepo.agentId ID` (a memory Letta Code made names it in "
    "letta.agentId)"
)

# Making a memory repository (create.py).
INIT_NOT_DIR = "{path} is a file; give a new or empty folder for the memory repository"
INIT_NOT_EMPTY = (
    "{path} is {what}; memrepo init only creates a memory repository in a new or empty folder "
    "(to connect an existing memory repository to a remote, use `memrepo repository set URL`)"
)
FOLDER_IS_GIT = "a git repository"  # {what} of INIT_NOT_EMPTY and CLONE_NOT_EMPTY
FOLDER_CANNOT_MAKE = "cannot make the folder {path}: {reason}; nothing was made: choose another folder"
FOLDER_NOT_EMPTY = "not empty"
INIT_COMMIT = "Create memory repository"

# Cloning one (clone.py).
CLONE_NO_NAME = "cannot tell a folder name from {url}; give one: `memrepo clone URL DIR`"
CLONE_NOT_DIR = "{path} is a file; give a new or empty folder for the clone"
CLONE_NOT_EMPTY = "{path} is {what}; memrepo clone only clones into a new or empty folder, so nothing was changed"
CLONE_UNREACHABLE = "cannot reach {url} ({problem}); nothing was cloned"
CLONE_EMPTY = (
    "{url} has no commits, so it holds no memory yet; nothing was cloned (make one and push it there with "
    "`memrepo init DIR --remote URL`)"
)
CLONE_NO_MAIN = "{url} has branches ({branches}) but no main; memrepo syncs main only, so nothing was cloned"
CLONE_NOT_MEMORY = (
    "{url} is a git repository but not a memory repository (its main has no system/, root MEMORY.md or "
    ".memrepo/); nothing was cloned"
)

# Sync and remotes.
SYNC_FAILED = "not synced ({reason}); local commits stay local and the next push or sync sends them"
