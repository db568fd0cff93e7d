"""What memrepo says that is no one package's: the sentences of the shared, low modules (the
policy file, settings, dates, ids, JSON depth, and the misuses they refuse) and of Claude's
memory tool, the one sentence two entry points share, and the helpers every texts module formats
counts and times with.

Each package says the rest in its own `texts` module, next to the code that says it."""

from __future__ import annotations

import string
from datetime import UTC, datetime
from typing import Any


def noun(count: Any, one: str, many: str | None = None) -> str:
    """The noun alone in the number a count asks for: `noun(1, "key")` is "key", `noun(2, "key")`
    "keys"; `many` for nouns that do not just take an "s"."""
    return one if count == 1 else (many if many is not None else one + "s")


def first_few(items: list[str], shown: int = 5) -> str:
    """Names for a message (a remote's branches, a tree's changed paths): the first few, and
    `...` when there are more."""
    return ", ".join(items[:shown]) + (" ..." if len(items) > shown else "")


def plural(count: Any, one: str, many: str | None = None, spec: str = "") -> str:
    """A count with its noun in the right number, never "file(s)": `plural(1, "file")` is
    "1 file", `plural(3, "file")` "3 files"; `many` for nouns that do not just take an "s";
    `spec` formats the number (`","`: 1,000)."""
    return f"{format(count, spec)} {noun(count, one, many)}"


def to_the_second(stamp: str | datetime | None) -> str:
    """A time as a person reads it, `2026-03-14 09:30:12 UTC`: the transcript store keeps
    microseconds, which only machines need. Text that is not a time is shown as it is."""
    if not stamp:
        return ""
    moment = stamp
    if isinstance(stamp, str):
        try:
            moment = datetime.fromisoformat(stamp)
        except ValueError:
            return stamp
    assert isinstance(moment, datetime)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


class _Counting(string.Formatter):
    """str.format, plus `{n:|one|many}` for a count with its noun (`{n:,|row|rows}` formats the
    number first) and `{t:when}` for a time to the second."""

    def format_field(self, value: Any, format_spec: str) -> str:
        if format_spec == "when":
            return to_the_second(value)
        spec, bar, nouns = format_spec.partition("|")
        if not bar:
            return super().format_field(value, format_spec)
        one, _, many = nouns.partition("|")
        return plural(value, one, many or None, spec)


_COUNTING = _Counting()


class Text(str):
    """A message that counts things or shows times: its `format` reads `{n:|one|many}` (see
    `plural`) and `{t:when}` (see `to_the_second`), so callers format it like any other message."""

    __slots__ = ()

    def format(self, *args: Any, **kwargs: Any) -> str:  # type: ignore[override]
        return _COUNTING.vformat(self, args, kwargs)



# A bug, as the CLI and `memrepo demo` report it.
INTERNAL_ERROR = (
    "memrepo: internal error ({error}); nothing was reported as saved. "
    "Run again with MEMREPO_DEBUG=1 to see where it happened."
)



HISTORY_DATE_FORMS = (
    "YYYY-MM-DD (00:00 UTC that day), YYYY-MM-DDTHH:MM[:SS[.ffffff]] (UTC), either followed by Z or an offset "
    "such as +02:00, or @SECONDS (Unix time)"
)

# Claude's memory tool (bot/anthropic_memory.py). A successful call answers in the words of the
# SDK's own file-backed memory tool, which Claude's memory tool is trained on, followed by
# memrepo's line saying what was committed; every other outcome is memrepo's message.
ANTHROPIC_SDK_MISSING = (
    "the Anthropic SDK is not installed ({problem}); install memrepo with its extra: "
    "pip install 'memrepo[anthropic]'"
)


# One integrator per repository (bot/repo_lock.py).
REPO_LOCK_BUSY = "another integrator has held the lock on {repo} for over {seconds:g}s; try again later"





# A memory with no remote, to an agent that wanted a pull request (memrepo tool, memrepo mcp).
CONNECT_HINT = "A person connects one with `memrepo repository set <url> --repo {root}`; then retry the edit."

# A harness's install pointed at a folder that is no memory (claude-code install, codex install).
NOT_A_MEMORY = "{repo} is not a memory repository with a commit (run `memrepo init` or clone one first)"
