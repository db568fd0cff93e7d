"""The memory tool as the session uses it: the same validation as `MemoryTool`, plus a
preview that computes what a call would change without writing anything, so the session can
decide where the edit goes (main or a pull request) before a byte is committed."""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass, field
from typing import Any

from bot.errors import MemrepoError
from bot.memfs.calls import Call, parse_call
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
    `pull-request` (not in main: see `pull_request`, `url`), `view`, or `refused`."""

    route: str = "direct"
    pull_request: int | None = None
    url: str | None = None
    branch: str | None = None
    labels: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, result: ToolResult, route: str) -> EditResult:
        return cls(**asdict(result), route=route if result.ok else "refused")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class SessionTool(MemoryTool):
    """MemoryTool with `preview` (the checks of a write, without the commit)."""

    def preview(self, raw: object) -> Preview:
        """What `raw` would change; MemrepoError when the call would be refused."""
        call = parse_call(raw)
        head = self.repo.head_sha()
        assert head is not None  # MemoryRepo.open refuses repositories without commits
        if not call.writes:
            return Preview(call, head)
        planned = self.checked_changes(call, head)
        return Preview(call, head, {p: (self.repo.read(p, head), data) for p, data in planned.items()})

    def refusal(self, raw: object, exc: MemrepoError) -> EditResult:
        """The result of a refused call, shaped as MemoryTool.call shapes it."""
        command = raw.get("command", "?") if isinstance(raw, dict) else "?"
        with contextlib.suppress(MemrepoError):
            command = parse_call(raw).command
        content = exc.details.get("content")
        return EditResult(ok=False, command=str(command), message=exc.message, revision=self.repo.head_sha(),
                          content=content if isinstance(content, str) else None, route="refused")
