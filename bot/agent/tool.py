"""What a memory tool call returns through the agent's write path: `MemoryTool`'s result and
where the edit went (bot/agent/write_path.py decides)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from bot.memfs import ToolResult


@dataclass
class EditResult(ToolResult):
    """A tool result that also says where an edit went: `route` is `direct` (committed on main),
    `pull-request` (not in main: see `pull_request`, `url`), `view` (views and searches), or `refused`."""

    route: str = "direct"
    pull_request: int | None = None
    url: str | None = None
    branch: str | None = None
    labels: list[str] = field(default_factory=list)
    results: list[Any] | None = None  # a paged search's results (bot/agent/memgpt.py), as data

    @classmethod
    def of(cls, result: ToolResult, route: str) -> EditResult:
        return cls(**asdict(result), route=route if result.ok else "refused")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
