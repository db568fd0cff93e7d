"""The memory tool as the session uses it: the same validation as `MemoryTool`, plus a
preview that computes what a call would change without writing anything, so the session can
decide where the edit goes (main or a pull request) before a byte is committed. The session
parses each call once; everything here takes the parsed `Call`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from bot.errors import MemrepoError
from bot.memfs.calls import Call
from bot.memfs.tool import MemoryTool, ToolResult


@dataclass(frozen=True)
class Preview:
    """A call and, for edits, what it would change at `head`: path -> (before, after)."""

    call: Call
    head: str
    changes: dict[str, tuple[bytes | None, bytes | None]] = field(default_factory=dict)

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(sorted(self.changes))


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


class SessionTool(MemoryTool):
    """MemoryTool with `preview` (the checks of a write, without the commit). Takes calls the
    session has parsed: it never parses one itself."""

    def preview(self, call: Call) -> Preview:
        """What `call` would change; MemrepoError when it would be refused."""
        head = self.repo.head_sha()
        assert head is not None  # MemoryRepo.open refuses repositories without commits
        if not call.writes:
            return Preview(call, head)
        planned = self.checked_changes(call, head)
        return Preview(call, head, {p: (self.repo.read(p, head), data) for p, data in planned.items()})

    def refusal(self, call: Call | str, exc: MemrepoError) -> EditResult:
        """The result of a refused call, shaped as MemoryTool shapes it: `call` is the parsed
        call, or for one that did not parse the command it named (`calls.named_command`)."""
        return EditResult.of(self._refused(call.command if isinstance(call, Call) else call, exc), "refused")
