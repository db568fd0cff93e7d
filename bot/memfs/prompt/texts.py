"""What compiling memory into the prompt says."""

from __future__ import annotations

# Prompt compile.
COMPILE_UNREADABLE = "[this file cannot be shown in the prompt: {problem}]"
TREE_TRUNCATED = "[Tree truncated: showing {shown} of {total} entries. {omitted} omitted.]"
