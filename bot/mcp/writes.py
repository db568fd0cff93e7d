"""The one step where an MCP tool call touches memory: perform a memory tool call as the agent.

Kept to a single function so that how writes are routed (a direct commit and push today; a
pull request for large, protected or untrusted edits once an agent session decides) can change
here without the server knowing.
"""

from __future__ import annotations

import os
from typing import Any

from bot.memfs.tool import MemoryTool, ToolResult


def perform(root: str | os.PathLike[str], call: dict[str, Any], *, agent_id: str | None = None,
            agent_name: str | None = None, push: bool = True) -> ToolResult:
    """Apply one memory tool call to the clone at `root`: one validated commit (pushed when the
    memory has a remote, queued for the next sync when the push fails), or a refusal that
    changes nothing. Blocking: git and the network."""
    return MemoryTool(root, agent_id, agent_name, push=push).call(call)
