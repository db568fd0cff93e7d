"""What the memory core says that no one of its folders owns: how a memory begins (`create`,
`clone`), the front door's refusal, and the sentences several folders (and callers outside
the core) say. Each folder says the rest from its own texts module (format/texts.py,
tool/texts.py, sync/texts.py, ...)."""

from __future__ import annotations

# Opening a repository.
REPO_NO_COMMITS = "{path} has no commits yet; `memrepo init` makes the first one"

# The memory tool.
NO_AGENT_ID = (
    "no agent id: pass --agent-id (or agent_id=) or set one with "
    "`memrepo init --agent-id ID` / `git config memrepo.agentId ID` (a memory Letta Code made names it in "
    "letta.agentId)"
)



# Sync and remotes.
SYNC_FAILED = "not synced ({reason}); local commits stay local and the next push or sync sends them"

# Letta Code's messages (memfs-format.md), verbatim.
MISSING_FRONTMATTER = "missing frontmatter (must start with ---)"

UNCLOSED_FRONTMATTER = "frontmatter opened but never closed (missing closing ---)"

READ_ONLY_FILE = "file is read_only and cannot be modified"

NOT_SYNCED = "shared memory {name} has no projection at {path} yet: run memrepo shared sync --repo {memory}"

REPO_NOT_GIT = "{path} is not a git repository (create a memory repository with `memrepo init`)"

CALL_UNKNOWN_COMMAND = "unknown memory command '{command}'; use one of: {commands}"
