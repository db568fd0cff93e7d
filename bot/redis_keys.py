"""Every Redis key and channel memrepo makes, made here and nowhere else.

All of them start with `memrepo:` (`PREFIX`); a repository in a key is lower-cased
(`repo_key`: GitHub names ignore case), a pull request is `owner/name#12` (`pr_key`).

| key | made by | what |
|---|---|---|
| `memrepo:job:<job-id>:guard` / `:run` / `:dirty` | `job_state_keys` | the collapsing enqueue's state (bot/queue.py) |
| `memrepo:delivery:<guid>` | `delivery_key` | webhook de-duplication, SET NX (bot/dedupe.py) |
| `memrepo:lock:<repo>` | `lock_key` | one integrator per repository; short TTL, renewed (bot/repo_lock.py) |
| `memrepo:repos` | `REPOS` | repositories an integrator job has seen, for the periodic reconcile |
| `memrepo:progress:<repo>#<n>` | `progress_key` | attempts and history per head and review count (integrator jobs) |
| `memrepo:published:<repo>#<n>` | `published_key` | the head event for this merge was published (integrator) |
| `memrepo:resolution-tried:<repo>#<n>:<sha>` | `resolution_tried_key` | a resolution was already tried at this head |
| `memrepo:ready:<repo>` (hash) | `ready_key` | number -> validated head: what the next batch merges |
| `memrepo:push-refused:<repo>` | `push_refused_key` | a push to the default branch was refused: merge API |
| `memrepo:fresh-base:<repo>:<branch>` | `fresh_base_key` | the base branch's tip, fetched or pushed seconds ago |
| `memrepo:permission:<repo>:<login>` | `permission_key`, `permission_pattern` | who may write, cached briefly |
| `memrepo:own-login:<repo>` | `own_login_key` | the integrator's own login on a repository, cached |
| `memrepo:head:<repo>` (pub/sub channel) | `head_channel` | head events (bot/notify/events.py) |
| `memrepo:head:*` (pattern) | `HEAD_CHANNELS` | the receiver's one subscription to all of them |
| `memrepo:last-head:<repo>` | `last_head_key` | the newest head event of a repository, for catching up |
| `memrepo:budget:<identity>` (sorted set) | `budget_key` | requests one identity sent in the last hour |
| `memrepo:budget-until:<identity>` | `budget_until_key` | no request before this time (a secondary limit) |
| `memrepo:budget-inflight:<identity>` (sorted set) | `in_flight_key` | requests in flight, to their leases' ends |
| `memrepo:app-token:<app>:<repo>` | `app_token_key` | an App's installation token, until shortly before it expires |

rq's own keys (`rq:queue:memrepo`, `rq:job:<job-id>`, ...) are rq's; the job ids memrepo
gives them (`integrate-<repo>-<n>`, `commit-<repo>-<sha>`, `reconcile-<repo>`,
`wake-<repo>-<n>`) are made in bot/queue.py and bot/integrator/jobs.py.
"""

from __future__ import annotations

PREFIX = "memrepo:"
REPOS = f"{PREFIX}repos"
HEAD_CHANNEL_PREFIX = f"{PREFIX}head:"
HEAD_CHANNELS = HEAD_CHANNEL_PREFIX + "*"  # every repository's head channel, as a pattern
LAST_HEAD_PREFIX = f"{PREFIX}last-head:"


def repo_key(repo: str) -> str:
    """The repository as keys use it: GitHub names ignore case, so keys are lower-case."""
    return repo.strip().lower()


def pr_key(repo: str, number: int) -> str:
    """The readable key of a pull request, `owner/name#12` (keys, logs, messages)."""
    return f"{repo_key(repo)}#{int(number)}"


def job_state_keys(job_id: str) -> tuple[str, str, str]:
    """(guard, run, dirty) keys of a collapsed job."""
    base = f"{PREFIX}job:{job_id}:"
    return base + "guard", base + "run", base + "dirty"


def delivery_key(guid: str) -> str:
    return f"{PREFIX}delivery:{guid}"


def lock_key(repo: str) -> str:
    return f"{PREFIX}lock:{repo_key(repo)}"


def progress_key(repo: str, number: int) -> str:
    return f"{PREFIX}progress:{pr_key(repo, number)}"


def published_key(repo: str, number: int) -> str:
    return f"{PREFIX}published:{pr_key(repo, number)}"


def resolution_tried_key(repo: str, number: int, head_sha: str) -> str:
    return f"{PREFIX}resolution-tried:{pr_key(repo, number)}:{head_sha}"


def ready_key(repo: str) -> str:
    return f"{PREFIX}ready:{repo_key(repo)}"


def push_refused_key(repo: str) -> str:
    return f"{PREFIX}push-refused:{repo_key(repo)}"


def fresh_base_key(repo: str, branch: str) -> str:
    return f"{PREFIX}fresh-base:{repo_key(repo)}:{branch}"


def permission_key(repo: str, login: str) -> str:
    return f"{PREFIX}permission:{repo_key(repo)}:{login.casefold()}"


def permission_pattern(owner: str, repo: str | None = None) -> str:
    """The SCAN pattern of the cached permissions on `owner/repo`, or on every repository of
    `owner` (glob characters in the names matched literally)."""
    def literal(text: str) -> str:
        return "".join("\\" + c if c in "*?[]\\" else c for c in text)

    where = literal(repo_key(f"{owner}/{repo}")) if repo else literal(repo_key(owner)) + "/*"
    return f"{PREFIX}permission:{where}:*"


def own_login_key(repo: str) -> str:
    return f"{PREFIX}own-login:{repo_key(repo)}"


def head_channel(repo: str) -> str:
    """The pub/sub channel of `repo`'s head events."""
    return HEAD_CHANNEL_PREFIX + repo_key(repo)


def last_head_key(repo: str) -> str:
    """Where the newest head event of `repo` is kept."""
    return LAST_HEAD_PREFIX + repo_key(repo)


def budget_key(identity: str) -> str:
    return f"{PREFIX}budget:{identity}"


def budget_until_key(identity: str) -> str:
    return f"{PREFIX}budget-until:{identity}"


def in_flight_key(identity: str) -> str:
    return f"{PREFIX}budget-inflight:{identity}"


def app_token_key(app_id: str, repo: str) -> str:
    return f"{PREFIX}app-token:{app_id}:{repo_key(repo)}"
