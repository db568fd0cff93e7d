"""Settings of memrepo's services (webhook receiver, workers, `serve`, localhub's data), read
from the environment here and nowhere else.

Services are configured the twelve-factor way, so that the same image runs anywhere; reading
every variable once at start-up, with one clear error naming a missing or bad variable, means
a misconfigured service refuses to start instead of failing on its first delivery. `Settings`
is what the receiver needs; the functions below the line read the rest (the forge, the
workers' credentials and folders, the access check), each variable's name written once.
"""

from __future__ import annotations

import hmac
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

from bot.errors import MemrepoError

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
SETTING_NOT_BOOLEAN = "{name} must be 1 or 0 (true/false, yes/no, on/off), found {value!r}"
SETTING_NOT_A_LIMIT = "{name} must be a positive number of requests, found {value!r}"
SETTING_NOT_A_COUNT = "{name} must be a positive whole number of requests, found {value!r}"

REDIS_URL = "REDIS_URL"
WEBHOOK_SECRET = "MEMREPO_WEBHOOK_SECRET"
AGENT_TOKEN = "MEMREPO_AGENT_TOKEN"
REPOS = "MEMREPO_REPOS"
BOT_LOGIN = "MEMREPO_BOT_LOGIN"
HEARTBEAT = "MEMREPO_SSE_HEARTBEAT"

ANY_REPOSITORY = "*"
REDIS_SCHEMES = ("redis", "rediss", "unix")
# GitHub's rules for the two halves of owner/name (logins: 1-39 letters, digits and hyphens,
# neither first nor last, as localhub's accounts; repository names: letters, digits, '.', '-',
# '_'), ASCII only and matched whole (with fullmatch: `$` would also match before a trailing
# newline). The receiver, the event stream and `memrepo localhub create-repo` read names by this
# one rule.
REPO_NAME = re.compile(r"(?P<owner>[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?)/(?P<name>[A-Za-z0-9._-]{1,100})")

DEFAULT_HEARTBEAT_SECONDS = 15.0
MAX_BODY_BYTES = 25 * 1024 * 1024  # GitHub caps webhook payloads at 25 MB
DELIVERY_TTL_SECONDS = 7 * 24 * 3600  # how long a delivery GUID is remembered (GitHub redelivers for 3 days)

T = TypeVar("T")


def is_repo_name(value: object) -> bool:
    """True for a well-formed `owner/name`."""
    return isinstance(value, str) and REPO_NAME.fullmatch(value) is not None


@dataclass(frozen=True)
class Settings:
    """What the receiver and the workers need. `repos` is None for "any repository that sends
    deliveries signed with the secret" (i.e. wherever the App or hook is installed); otherwise
    the lower-cased `owner/name`s accepted."""

    redis_url: str
    webhook_secret: str
    agent_token: str
    repos: frozenset[str] | None = None
    bot_login: str | None = None
    heartbeat_seconds: float = DEFAULT_HEARTBEAT_SECONDS
    max_body_bytes: int = MAX_BODY_BYTES
    delivery_ttl_seconds: int = DELIVERY_TTL_SECONDS

    def __post_init__(self) -> None:
        check_redis_url(self.redis_url)
        if not self.webhook_secret:
            raise MemrepoError(SETTING_MISSING.format(name=WEBHOOK_SECRET))
        if not self.agent_token:
            raise MemrepoError(SETTING_MISSING.format(name=AGENT_TOKEN))
        if self.repos is not None:
            object.__setattr__(self, "repos", frozenset(r.lower() for r in self.repos))
        if self.heartbeat_seconds <= 0:
            raise MemrepoError(SETTING_NOT_POSITIVE.format(name=HEARTBEAT, value=self.heartbeat_seconds))

    def accepts(self, repo: str) -> bool:
        """Whether deliveries for `repo` (owner/name, any case) are acted on."""
        return self.repos is None or repo.lower() in self.repos

    def is_operator(self, token: str) -> bool:
        """Whether `token` is the operator token (compared in constant time)."""
        return hmac.compare_digest(token.encode("utf-8", "replace"), self.agent_token.encode("utf-8", "replace"))

    def is_bot(self, login: object) -> bool:
        """Whether `login` is the integrator's own account (GitHub logins ignore case)."""
        return bool(self.bot_login) and isinstance(login, str) and login.lower() == str(self.bot_login).lower()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from the environment; a missing or malformed variable is a MemrepoError
        that names it."""
        env = os.environ if environ is None else environ
        problems = Problems()
        redis_url = problems.read(lambda: redis_url_from_env(env), "")
        webhook_secret = problems.read(lambda: require(env, WEBHOOK_SECRET), "")
        agent_token = problems.read(lambda: require(env, AGENT_TOKEN), "")
        repos = problems.read(lambda: repos_from_env(env), None)
        heartbeat = problems.read(lambda: positive_setting(env, HEARTBEAT, DEFAULT_HEARTBEAT_SECONDS),
                                  DEFAULT_HEARTBEAT_SECONDS)
        problems.check()
        return cls(redis_url=redis_url, webhook_secret=webhook_secret, agent_token=agent_token, repos=repos,
                   bot_login=bot_login(env), heartbeat_seconds=heartbeat)


class Problems:
    """Start-up problems gathered while a service reads its settings, so that one run names
    every missing or bad variable (a person fixing a deployment should not learn them one
    start at a time). `read` runs one reader and keeps its MemrepoError; `check` raises them
    all as one (`combined`)."""

    def __init__(self) -> None:
        self.errors: list[MemrepoError] = []

    def read(self, reader: Callable[[], T], default: T) -> T:
        """What `reader` returns, or `default` after keeping its error (a combined error is
        kept as its parts)."""
        try:
            return reader()
        except MemrepoError as exc:
            parts = exc.details.get("problems")
            self.errors.extend(parts if isinstance(parts, list) else [exc])
            return default

    def check(self) -> None:
        """Raise every problem kept, as one MemrepoError; nothing when there was none."""
        if self.errors:
            raise combined(self.errors)


def combined(errors: Sequence[MemrepoError]) -> MemrepoError:
    """One error, one line, for several problems: the missing variables named together first
    (as `require` words one), then each other problem once, in the order found. `details`
    keeps the parts (`problems`), so a caller that gathers more can take them apart again."""
    names = list(dict.fromkeys(str(e.details["missing"]) for e in errors if e.details.get("missing")))
    others = list(dict.fromkeys(str(e) for e in errors if not e.details.get("missing")))
    said = []
    if len(names) == 1:
        said.append(SETTING_MISSING.format(name=names[0]))
    elif names:
        said.append(SETTINGS_MISSING.format(names=", ".join(names[:-1]), last=names[-1]))
    return MemrepoError("; ".join(said + others), problems=list(errors))


def require(env: Mapping[str, str], name: str) -> str:
    """The non-blank value of `name`, or a MemrepoError saying it must be set."""
    found = value(name, env)
    if not found:
        raise MemrepoError(SETTING_MISSING.format(name=name), missing=name)
    return found


def redis_url_from_env(environ: Mapping[str, str] | None = None) -> str:
    """REDIS_URL alone, checked (workers and commands that need nothing else)."""
    url = require(os.environ if environ is None else environ, REDIS_URL)
    check_redis_url(url)
    return url


def check_redis_url(url: str) -> None:
    if not url:
        raise MemrepoError(SETTING_MISSING.format(name=REDIS_URL), missing=REDIS_URL)
    if urlsplit(url).scheme not in REDIS_SCHEMES:
        raise MemrepoError(SETTING_BAD_REDIS_URL.format(name=REDIS_URL, value=url))


def parse_repos(text: str) -> frozenset[str] | None:
    """MEMREPO_REPOS: empty or `*` for any installed repository, else a comma list of owner/name."""
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items or items == [ANY_REPOSITORY]:
        return None
    bad = [item for item in items if not is_repo_name(item)]
    if bad:
        raise MemrepoError(SETTING_BAD_REPOS.format(name=REPOS, value=bad[0]))
    return frozenset(item.lower() for item in items)


def positive_setting(env: Mapping[str, str], name: str, default: float) -> float:
    """A positive, finite number from the environment (`default` when unset); else a start-up error."""
    return positive_number(name, env, default=default, error=SETTING_NOT_POSITIVE)


# ------------------------------------------------------------------ the forge, the workers, the folders
# The integrator's workers, the receiver's access check and palace, and `serve --local` read
# these; every read is here, so a setting's name, default and check are written once.
FORGE_URL = "MEMREPO_GITHUB_URL"  # the forge's REST API base (GitHub Enterprise: https://host/api/v3)
DEFAULT_FORGE_URL = "https://api.github.com"  # GitHub's API, where the forge client goes unless told otherwise
GIT_URL = "MEMREPO_GIT_URL"  # where repositories are cloned from, when it is not derived from the API URL
FORGE_TOKENS = ("MEMREPO_GITHUB_TOKEN", "MEMREPO_FORGE_TOKEN", "GITHUB_TOKEN")  # the integrator's token: the first set
APP_ID = "MEMREPO_APP_ID"
APP_KEY = "MEMREPO_APP_PRIVATE_KEY"
APP_KEY_FILE = "MEMREPO_APP_PRIVATE_KEY_FILE"
WORK_DIR = "MEMREPO_WORK_DIR"
HOME = "MEMREPO_HOME"
LOCK_TTL = "MEMREPO_LOCK_TTL"  # seconds a crashed worker's lock on a repository outlives it
ACCESS_TTL = "MEMREPO_ACCESS_TTL"  # seconds the forge's answer on a token is kept (at most 300)
LLM_URL = "MEMREPO_LLM_URL"
LLM_MODEL = "MEMREPO_LLM_MODEL"
LLM_KEYS = ("MEMREPO_LLM_API_KEY", "OPENAI_API_KEY")
AGENT_FORGE_TOKENS = ("MEMREPO_FORGE_TOKEN", "GITHUB_TOKEN")  # an agent's own forge token, as git finds it
# The person's own token for `memrepo review` (never the remote URL's, which is the agent's).
REVIEW_TOKENS = ("MEMREPO_REVIEW_TOKEN", "GH_TOKEN", "GITHUB_TOKEN")
FORGE_API_URL = "MEMREPO_FORGE_API_URL"  # the API of the forge a clone's origin is on, when not derived
PALACE_TOKEN = "MEMREPO_PALACE_TOKEN"  # the token `memrepo palace` asks of a viewer off loopback
XDG_DATA_HOME = "XDG_DATA_HOME"
# Merging by one push of the default branch (bot/integrator/batch.py): on unless set to 0.
MERGE_BY_PUSH = "MEMREPO_MERGE_BY_PUSH"
# The write budget every worker of one forge identity shares (bot/forge/budget.py): GitHub's
# documented secondary limits by default; a GitHub Enterprise with other limits sets its own.
WRITES_PER_MINUTE = "MEMREPO_WRITES_PER_MINUTE"  # content-generating requests a minute (GitHub: 80)
WRITES_PER_HOUR = "MEMREPO_WRITES_PER_HOUR"  # content-generating requests an hour (GitHub: 500)
POINTS_PER_MINUTE = "MEMREPO_POINTS_PER_MINUTE"  # points a minute, a read 1, a write 5 (GitHub: 900)
READS_PER_HOUR = "MEMREPO_READS_PER_HOUR"  # requests an hour, the primary limit (GitHub: 5,000)
CONCURRENT_REQUESTS = "MEMREPO_CONCURRENT_REQUESTS"  # requests in flight at once (GitHub: 100)
XDG_CACHE_HOME = "XDG_CACHE_HOME"
# The variables a service's settings come from, which a child process must not inherit from
# a shell that set them for something else (tests/served.py).
SERVICE_ENV = (REDIS_URL, WEBHOOK_SECRET, AGENT_TOKEN, REPOS, BOT_LOGIN, HEARTBEAT)


def _env(environ: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if environ is None else environ


def value(name: str, environ: Mapping[str, str] | None = None) -> str:
    """The value of `name` without surrounding blanks ("" when unset)."""
    return (_env(environ).get(name) or "").strip()


def raw(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The value of `name` as it is set (None when unset), for a reader that checks it itself
    (a server's token: bot/bearer.py)."""
    return _env(environ).get(name)


def first_value(names: tuple[str, ...], environ: Mapping[str, str] | None = None) -> str | None:
    """The first of `names` that is set (not blank), without surrounding blanks; None when none is."""
    return next((found for found in (value(name, environ) for name in names) if found), None)


def positive_number(name: str, environ: Mapping[str, str] | None = None, *, default: float, error: str) -> float:
    """`name` as a positive, finite number (of seconds, say): `default` when it is unset or blank;
    otherwise a MemrepoError whose text is the caller's `error`, formatted with the variable's
    `name` and the `value` found."""
    found = value(name, environ)
    if not found:
        return default
    try:
        number = float(found)
    except ValueError:
        number = -1.0
    if not 0 < number < float("inf"):  # NaN is not greater than 0 either
        raise MemrepoError(error.format(name=name, value=found))
    return number


def positive_whole_number(name: str, environ: Mapping[str, str] | None = None, *, default: int, error: str) -> int:
    """`name` as a whole number of at least 1, written in digits: `default` when it is unset or
    blank; otherwise a MemrepoError whose text is the caller's `error`, formatted with the
    variable's `name` and the `value` found."""
    found = value(name, environ)
    if not found:
        return default
    if not found.isdecimal() or int(found) < 1:  # isdecimal: what int() reads ("²" is a digit it refuses)
        raise MemrepoError(error.format(name=name, value=found))
    return int(found)


def bot_login(environ: Mapping[str, str] | None = None) -> str | None:
    """MEMREPO_BOT_LOGIN: the integrator's own account, when it is set."""
    return value(BOT_LOGIN, environ) or None


def repos_from_env(environ: Mapping[str, str] | None = None) -> frozenset[str] | None:
    """MEMREPO_REPOS, read as `Settings.from_env` reads it (None: any repository)."""
    return parse_repos(_env(environ).get(REPOS, ""))


def forge_url(environ: Mapping[str, str] | None = None) -> str:
    """MEMREPO_GITHUB_URL, else GitHub's API."""
    return value(FORGE_URL, environ) or DEFAULT_FORGE_URL


def git_url(environ: Mapping[str, str] | None = None) -> str | None:
    """MEMREPO_GIT_URL when it is set."""
    return value(GIT_URL, environ) or None


def forge_token(environ: Mapping[str, str] | None = None) -> str | None:
    """The integrator's forge token: MEMREPO_GITHUB_TOKEN, MEMREPO_FORGE_TOKEN or GITHUB_TOKEN."""
    return first_value(FORGE_TOKENS, environ)


def app_key_given(environ: Mapping[str, str] | None = None) -> bool:
    """Whether a GitHub App's private key (or its file) is set."""
    return any(value(name, environ) for name in (APP_KEY, APP_KEY_FILE))


def github_app(environ: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """A GitHub App's id and private key (MEMREPO_APP_ID with MEMREPO_APP_PRIVATE_KEY, or the
    file MEMREPO_APP_PRIVATE_KEY_FILE names); None without an id. A MemrepoError names what
    is missing or unreadable."""
    env = _env(environ)
    app_id = value(APP_ID, env)
    if not app_id:
        return None
    key = env.get(APP_KEY) or ""
    key_file = value(APP_KEY_FILE, env)
    if not key.strip() and key_file:
        try:
            key = Path(key_file).expanduser().read_text()
        except OSError as exc:
            raise MemrepoError(
                f"{APP_KEY_FILE} names {key_file}, which cannot be read ({exc.strerror or exc})") from None
    if not key.strip():
        raise MemrepoError(SETTING_MISSING.format(name=f"{APP_KEY} (or {APP_KEY_FILE})"))
    return app_id, key


def work_dir(environ: Mapping[str, str] | None = None) -> Path:
    """MEMREPO_WORK_DIR, else `integrator/` in MEMREPO_HOME or the user's cache folder."""
    explicit = value(WORK_DIR, environ)
    if explicit:
        return Path(explicit).expanduser()
    home = value(HOME, environ)
    if home:
        return Path(home).expanduser() / "integrator"
    cache = value(XDG_CACHE_HOME, environ) or str(Path("~/.cache").expanduser())
    return Path(cache) / "memrepo" / "integrator"


def data_home(environ: Mapping[str, str] | None = None) -> Path:
    """memrepo's data folder: `memrepo` in $XDG_DATA_HOME, else in ~/.local/share. As the XDG
    spec says, a relative $XDG_DATA_HOME is ignored (bot/transcript/home.py reads it so too)."""
    xdg = _env(environ).get(XDG_DATA_HOME, "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "share"
    return base / "memrepo"


def data_dir(kind: str, environ: Mapping[str, str] | None = None) -> Path:
    """The folder a local service keeps its data in by default: `<kind>` in `data_home()`
    (`localhub`, `serve`)."""
    return data_home(environ) / kind


def llm(environ: Mapping[str, str] | None = None) -> tuple[str, str, str | None] | None:
    """The conflict resolver's model: (MEMREPO_LLM_URL, MEMREPO_LLM_MODEL, the first key of
    LLM_KEYS) when the first two are set, else None."""
    url, model = value(LLM_URL, environ), value(LLM_MODEL, environ)
    if not url or not model:
        return None
    return url, model, first_value(LLM_KEYS, environ)


def lock_ttl(default: float, environ: Mapping[str, str] | None = None) -> float:
    """MEMREPO_LOCK_TTL, a positive number of seconds (`default` when unset)."""
    return positive_setting(_env(environ), LOCK_TTL, default)


def access_ttl(default: float, maximum: float, environ: Mapping[str, str] | None = None) -> float:
    """MEMREPO_ACCESS_TTL: positive, at most `maximum` seconds (`default` when unset)."""
    env = _env(environ)
    ttl = positive_setting(env, ACCESS_TTL, default)
    if ttl > maximum:
        raise MemrepoError(SETTING_NOT_POSITIVE.format(name=ACCESS_TTL, value=env.get(ACCESS_TTL)) +
                           f" (at most {maximum:g})")
    return ttl


TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")


def boolean(name: str, environ: Mapping[str, str] | None = None, *, default: bool) -> bool:
    """`name` as a yes or no (1/true/yes/on, 0/false/no/off, any case): `default` when unset or
    blank; anything else a start-up error naming the variable."""
    found = value(name, environ)
    if not found:
        return default
    if found.lower() in TRUE_WORDS:
        return True
    if found.lower() in FALSE_WORDS:
        return False
    raise MemrepoError(SETTING_NOT_BOOLEAN.format(name=name, value=found))


def merge_by_push(environ: Mapping[str, str] | None = None) -> bool:
    """MEMREPO_MERGE_BY_PUSH: merge ready pull requests by one push of the default branch (the
    default); 0 merges each through the forge's merge API."""
    return boolean(MERGE_BY_PUSH, environ, default=True)


def concurrent_requests(default: int, environ: Mapping[str, str] | None = None) -> int:
    """MEMREPO_CONCURRENT_REQUESTS: the requests one forge identity may have in flight at once,
    a positive whole number (`default` when unset)."""
    return positive_whole_number(CONCURRENT_REQUESTS, environ, default=default, error=SETTING_NOT_A_COUNT)


def budget_limits(defaults: tuple[float, float, float, float],
                  environ: Mapping[str, str] | None = None) -> tuple[float, float, float, float]:
    """(content-generating requests a minute, an hour, points a minute, requests an hour) from
    MEMREPO_WRITES_PER_MINUTE, MEMREPO_WRITES_PER_HOUR, MEMREPO_POINTS_PER_MINUTE and
    MEMREPO_READS_PER_HOUR, each a positive number (`defaults` when unset)."""
    names = (WRITES_PER_MINUTE, WRITES_PER_HOUR, POINTS_PER_MINUTE, READS_PER_HOUR)
    found = [positive_number(name, environ, default=default, error=SETTING_NOT_A_LIMIT)
             for name, default in zip(names, defaults, strict=True)]
    return found[0], found[1], found[2], found[3]
