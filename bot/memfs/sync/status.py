"""Where a clone stands against its remote's main: `memrepo repository status`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.memfs.store.repo import MemoryRepo
from bot.memfs.sync import transport
from bot.memfs.sync.push import last_sync
from bot.memfs.sync.redaction import redact
from bot.memfs.sync.replay import SetAside, backups, count_commits, set_aside_commits
from bot.memfs.sync.transport import TRACKING_REF, remote_url
from bot.texts import Text

STATUS_AHEAD_VALUE = Text("{count:|commit|commits} not pushed")
STATUS_BEHIND_VALUE = Text("{count:|commit|commits} not pulled (as of {when})")
STATUS_UNKNOWN = "unknown (never fetched)"


@dataclass(frozen=True)
class RepoStatus:
    url: str | None
    branch: str | None
    head: str | None
    remote_head: str | None
    ahead: int | None
    behind: int | None
    last_sync: str | None
    backups: list[str] = field(default_factory=list)
    fetched: bool = False
    fetch_error: str | None = None
    set_aside: list[SetAside] = field(default_factory=list)

    def as_data(self) -> dict[str, Any]:
        """`repository status --json`."""
        data = {k: getattr(self, k) for k in ("url", "branch", "head", "remote_head", "ahead", "behind",
                                               "last_sync", "backups", "fetched", "fetch_error")}
        return {**data, "set_aside": [entry.as_data() for entry in self.set_aside]}


def status_lines(st: RepoStatus, extra: tuple[tuple[str, str], ...] = ()) -> list[str]:
    """`repository status` as a person reads it: one aligned `label: value` line per fact."""
    when = "this fetch" if st.fetched else "the last fetch"
    rows = [("remote", st.url or "none (connect one with `memrepo repository set <url>`)"),
            ("head", (st.head or "")[:12] + (f" ({st.branch})" if st.branch else ""))]
    if st.url is not None:
        rows += [
            ("ahead", STATUS_UNKNOWN if st.ahead is None
             else STATUS_AHEAD_VALUE.format(count=st.ahead)),
            ("behind", STATUS_UNKNOWN if st.behind is None
             else STATUS_BEHIND_VALUE.format(count=st.behind, when=when)),
            ("last sync", st.last_sync or "never"),
        ]
        if st.fetch_error:
            rows.append(("", f"fetch failed: {st.fetch_error}"))
    rows.append(("backups", ", ".join(st.backups) if st.backups else "none"))
    rows += [("Set aside", f"{e.commit[:12]} \"{e.message}\" at {e.ref}: {e.reason}") for e in st.set_aside]
    rows += extra
    width = max(len(label) for label, _ in rows) + 2
    return [f"{label + ':' if label else '':<{width}}{value}" for label, value in rows]


def status(repo: MemoryRepo, fetch: bool = False) -> RepoStatus:
    """Where this clone stands against the remote's main as last fetched (or fetched now)."""
    url = remote_url(repo)
    fetch_error = None
    fetched = False
    if url is not None and fetch:
        with repo.lock():
            _, fetch_error = transport.fetch(repo)
        fetched = fetch_error is None
    head = repo.head_sha()
    remote_head = repo.resolve(TRACKING_REF) if url is not None else None
    ahead = behind = None
    if head is not None and url is not None:
        if remote_head is not None:
            ahead, behind = repo.git.ahead_behind(head, remote_head)
        else:
            ahead = count_commits(repo, head) if fetched else None
            behind = 0 if fetched else None
    return RepoStatus(
        url=redact(url) if url is not None else None,
        branch=repo.branch(),
        head=head,
        remote_head=remote_head,
        ahead=ahead,
        behind=behind,
        last_sync=last_sync(repo),
        backups=backups(repo),
        set_aside=set_aside_commits(repo),
        fetched=fetched,
        fetch_error=fetch_error,
    )
