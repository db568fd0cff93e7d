"""What compiling memory into the prompt says."""

from __future__ import annotations

# Prompt compile.
COMPILE_UNREADABLE = "[this file cannot be shown in the prompt: {problem}]"
TREE_TRUNCATED = "[Tree truncated: showing {shown} of {total} entries. {omitted} omitted.]"
SHARED_INTRO = ("Shared memory: memory kept by the team, attached to several agents, not part of your "
                "in-context memory. Each one below has its own projection root and remote; its tree shows "
                "descriptions, not contents. Read its files as shared/<name>/<path> with the memory tool; a "
                "change you make there becomes a pull request on the shared repository, which the team reviews.")
SHARED_NOT_PROJECTED = "[not projected here yet: memrepo shared sync]"
SHARED_READ_ONLY = "read-only: propose changes to it on its repository, not with the memory tool"
