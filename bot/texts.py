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


# The policy file (.memrepo/config.yml); shown after "path: ".
POLICY_NOT_POSITIVE = "'{key}' must be a positive whole number, found {value!r}"
POLICY_NOT_CHOICE = "'{key}' must be one of {choices}, found {value!r}"
POLICY_NOT_SECTION = "'{key}' must be a mapping, found {kind}"
POLICY_NOT_BOOL = "'{key}' must be true or false, found {value!r}"
POLICY_NOT_TEXT = "'{key}' must be text, found {kind}"
POLICY_BAD_YAML = "not valid YAML: {problem}"
YAML_DUPLICATE_KEY = "the key '{key}' appears more than once (keep one)"
POLICY_NOT_MAPPING = "must be a mapping of keys to values, found {kind}"
POLICY_UNKNOWN_KEY = "unknown key '{key}' (allowed: {allowed})"
POLICY_PROTECTED = "'protected' must be a list of path patterns such as system/persona.md"
POLICY_TRUSTED_SOURCES = (
    "trusted_sources must be a list of tool sources such as 'tool:calculator' (tool results the agent may "
    "act on without a person's review; external:... sources are never trusted)"
)

# A bug, as the CLI and `memrepo demo` report it.
INTERNAL_ERROR = (
    "memrepo: internal error ({error}); nothing was reported as saved. "
    "Run again with MEMREPO_DEBUG=1 to see where it happened."
)

# JSON from outside (bot/bounded_json.py).
JSON_TOO_DEEP = "{what} nests arrays and objects deeper than {limit} levels, more than memrepo reads"

# Ids (bot/contracts.py): an id names a file, so it is checked before anything is stored.
TRANSCRIPT_ID_TYPE = "{field} must be text, found {kind}"
TRANSCRIPT_ID_BAD = (
    "{field} {value!a} is not valid: use 1-{limit} ASCII letters, digits, '.', '_' or '-', starting "
    "with a letter or digit and without '..' (it names a file)"
)
DREAM_ID_BAD = "not a dream id: {value!r}"

# Dates and ranges (bot/dates.py), for every --since, --until and `at`.
SEARCH_EMPTY_RANGE = "since {since} is not before until {until}; nothing can match"
HISTORY_DATE_FORMS = (
    "YYYY-MM-DD (00:00 UTC that day), YYYY-MM-DDTHH:MM[:SS[.ffffff]] (UTC), either followed by Z or an offset "
    "such as +02:00, or @SECONDS (Unix time)"
)
HISTORY_BAD_DATE = "cannot read {value!r} as a date; use {forms}"
HISTORY_BAD_DATE_REASON = "cannot read {value!r} as a date ({reason}); use {forms}"
HISTORY_DATE_OUT_OF_RANGE = "out of range"
HISTORY_BAD_ZONE = "the zone {zone} is not an offset from UTC"

# Claude's memory tool (bot/anthropic_memory.py). A successful call answers in the words of the
# SDK's own file-backed memory tool, which Claude's memory tool is trained on, followed by
# memrepo's line saying what was committed; every other outcome is memrepo's message.
ANTHROPIC_SDK_MISSING = (
    "the Anthropic SDK is not installed ({problem}); install memrepo with its extra: "
    "pip install 'memrepo[anthropic]'"
)
ANTHROPIC_VIEW_FILE = "Here's the content of {path} with line numbers:\n{content}"
ANTHROPIC_VIEW_FOLDER = "Here're the files and directories up to 2 levels deep in {path}, excluding hidden items:"
ANTHROPIC_CREATED = "File created successfully at: {path}"
ANTHROPIC_REPLACED = (
    "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n{snippet}"
)
ANTHROPIC_EDITED = "The file {path} has been edited."
ANTHROPIC_DELETED = "Successfully deleted {path}"
ANTHROPIC_RENAMED = "Successfully renamed {old} to {new}"
ANTHROPIC_UNKNOWN_COMMAND = (
    "unknown memory command {command!r}; the memory tool has view, create, str_replace, insert, delete and rename"
)
ANTHROPIC_NO_CLEAR_ALL = (
    "memory is a reviewed git repository and is never cleared at once; delete files one by one (each deletion "
    "is a commit a person can see and revert)"
)

# Service settings from the environment (bot/settings.py).
SETTING_MISSING = "{name} is not set; the integrator's services read their configuration from the environment"
SETTINGS_MISSING = (
    "{names} and {last} are not set; the integrator's services read their configuration from the environment"
)
SETTING_BAD_REDIS_URL = (
    "{name} must be a Redis URL such as redis://localhost:6379/0 (or rediss://..., unix://...), found {value!r}"
)
SETTING_BAD_REPOS = (
    "{name} must be * (any installed repository) or a comma-separated list of owner/name, found {value!r}"
)
SETTING_NOT_POSITIVE = "{name} must be a positive number of seconds, found {value!r}"
SETTING_AT_MOST = " (at most {limit:g})"
SETTING_NOT_BOOLEAN = "{name} must be 1 or 0 (true/false, yes/no, on/off), found {value!r}"
SETTING_NOT_A_LIMIT = "{name} must be a positive number of requests, found {value!r}"
INTEGRATOR_APP_KEY_UNREADABLE = "{name} names {path}, which cannot be read ({error})"

# One integrator per repository (bot/repo_lock.py).
REPO_LOCK_BUSY = "another integrator has held the lock on {repo} for over {seconds:g}s; try again later"
REPO_LOCK_BAD_TTL = "ttl must be positive"

# The integrator's jobs (bot/queue.py): a pull request's job key.
QUEUE_BAD_NUMBER = "not a pull request number: {value!r}"
# What a worker refuses to run (bot/queue.py: refusal), logged as JOB_REFUSED.
JOB_REFUSED = "job {job} refused, nothing of it was run: {reason}"
JOB_NOT_JSON = "its data is not JSON (a pickled job, or not one rq wrote for memrepo)"
JOB_NOT_OURS = "{func!r} is not one of memrepo's job functions ({allowed})"
JOB_HOOKS = "it asks for callbacks or webhooks, which memrepo's jobs never have"
JOB_BAD_ARGUMENTS = "{func} takes exactly ({expected}) as JSON, not what the job holds"

# Backoff schedules (bot/backoff.py), which our own code builds.
BACKOFF_BAD_SCHEDULE = "not a backoff schedule: {schedule!r}"
BACKOFF_BAD_STEP = "n must be >= 0"

# The cache of the forge's access verdicts (bot/access.py), as a server configures it.
ACCESS_BAD_TTL = "ttl must be in (0, {limit:g}] seconds, found {ttl!r}"
ACCESS_BAD_MAX_ENTRIES = "max_entries must be at least 1, found {value!r}"

# The one TCP bind (bot/sockets.py).
SERVE_CANNOT_BIND = "cannot listen on {host}:{port}: {error}"
PORT_OUT_OF_RANGE = "port {port} is not from 0 to 65535"

# A memory with no remote, to an agent that wanted a pull request (memrepo tool, memrepo mcp).
CONNECT_HINT = "A person connects one with `memrepo repository set <url> --repo {root}`; then retry the edit."
