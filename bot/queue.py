"""The integrator's job queue on Redis: the rq queue, job ids and the collapsing enqueue.

Layout: one global rq queue (`QUEUE`) that any number of workers on any machine serve; a job
takes its repository's lock (bot/repo_lock.py) before acting, so two merges of the same memory
never race while jobs of different repositories run in parallel. A webhook delivery's
de-duplication (bot/dedupe.py) rides in the enqueue's script, so the usual delivery is one
round trip.

Collapsing: the rq job id of an integration is its pull request's key (`job_key`), and
`enqueue_collapsed` decides atomically (one Lua script that reads rq's own job status) whether
an event needs a new job:

- a job with that id is queued (not started): nothing to add; it reads the state when it runs;
- it is running: mark it "dirty"; a job function wrapped with `collapsing` runs once more when
  it ends (in the same process: enqueueing the same id while rq still finishes the old job
  would be overwritten by rq's bookkeeping), and the dirty check and the end of the run are
  one atomic step, so no event falls between them;
- otherwise: enqueue (a short guard key keeps two receivers from enqueueing it twice).

Job functions are named by dotted path, so the receiver never imports the integrator.

What runs: job data is JSON (`SERIALIZER`, for every queue and worker made here), never rq's
default pickle, whose loading alone runs whatever the pickle names; and `Worker` runs only the
functions in `ALLOWED`, with the arguments each takes (`refusal`), failing anything else with
one log line before a line of it runs. Whoever can write into Redis can still queue our own
jobs for any repository, which only makes the integrator read the forge again.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, ParamSpec, TypeVar

from redis import Redis
from redis.backoff import ExponentialBackoff
from redis.exceptions import NoScriptError
from redis.retry import Retry as RedisRetry
from rq import Queue, Retry
from rq import Worker as RqWorker
from rq.exceptions import DeserializationError
from rq.executions import Execution
from rq.job import Job, get_current_job
from rq.serializers import JSONSerializer

from bot.backoff import Backoff, poll
from bot.contracts import is_object_name
from bot.redis_keys import delivery_key, job_state_keys, repo_key
from bot.settings import is_repo_name

# The integrator's jobs (bot/queue.py): a pull request's job key.
QUEUE_BAD_NUMBER = "not a pull request number: {value!r}"
# What a worker refuses to run (bot/queue.py: refusal), logged as JOB_REFUSED.
JOB_REFUSED = "job {job} refused, nothing of it was run: {reason}"
JOB_NOT_JSON = "its data is not JSON (a pickled job, or not one rq wrote for memrepo)"
JOB_NOT_OURS = "{func!r} is not one of memrepo's job functions ({allowed})"
JOB_HOOKS = "it asks for callbacks or webhooks, which memrepo's jobs never have"
JOB_BAD_ARGUMENTS = "{func} takes exactly ({expected}) as JSON, not what the job holds"

log = logging.getLogger("memrepo.queue")

QUEUE = "memrepo"
QUEUES = (QUEUE,)

# The job functions (bot/integrator/jobs.py), by dotted path.
INTEGRATE = "bot.integrator.jobs.integrate"  # (repo, number): one pull request
INTEGRATE_COMMIT = "bot.integrator.jobs.integrate_commit"  # (repo, sha): the open pull requests whose head is sha
RECONCILE = "bot.integrator.jobs.reconcile"  # (repo,): enqueue every open memrepo pull request without a job
MERGE_READY = "bot.integrator.jobs.merge_ready"  # (repo,): merge what is ready, in one push of the default branch
WAKE = "bot.integrator.jobs.wake"  # (repo, number): a scheduled integrate, enqueued by rq's scheduler

# The allow-list: every function a worker runs, with what each positional argument must be.
ARGUMENTS: dict[str, tuple[str, ...]] = {
    INTEGRATE: ("repo", "number"), INTEGRATE_COMMIT: ("repo", "sha"), RECONCILE: ("repo",), WAKE: ("repo", "number"),
    MERGE_READY: ("repo",)}
ALLOWED = frozenset(ARGUMENTS)
SERIALIZER = JSONSerializer  # rq's default, pickle, runs what a job's bytes name as it reads them

JOB_TIMEOUT = 600  # seconds; a resolution may call an LLM
RESULT_TTL = 3600  # keep finished jobs an hour (for `rq info` and tests), then rq forgets them
FAILURE_TTL = 7 * 24 * 3600
RETRIES = 3  # immediate re-runs after an exception or a killed worker (the job re-reads state first)
GUARD_MS = 10_000  # how long one receiver may take between deciding to enqueue and enqueueing
DIRTY_TTL = 24 * 3600
ENDED_TTL = 30  # how long "the run ended, rq is still writing it down" stays visible
WAIT_SECONDS = 2.0  # how long enqueue waits for a job that is just ending or being enqueued
ENQUEUE_BACKOFF = Backoff(0.005, cap=0.1)  # enqueue asking again while a job is just ending or being enqueued
PUBSUB_POLL = 1.0  # seconds: how soon a worker's command channel thread notices it is to stop
MAX_NUMBER = 2**63 - 1  # GitHub's pull request numbers and ids are positive signed 64-bit integers

_KEY_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")

Outcome = Literal["queued", "pending", "dirty", "duplicate"]


# ---------------------------------------------------------------------------------- connecting
def connect(url: str) -> Redis:
    """A Redis client for the services: short timeouts and one quick retry, so a request made
    while Redis is down fails in milliseconds (the receiver answers 503) and the first request
    after a restart reconnects instead of failing on a dead socket."""
    return Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5, health_check_interval=30,
                          retry=RedisRetry(ExponentialBackoff(cap=0.2, base=0.02), 1))


# ---------------------------------------------------------------------------------- job ids
def _escape(text: str) -> str:
    """rq job ids allow only letters, digits, '_' and '-': every other byte (and '_' itself)
    becomes `_XX`, so the id is unambiguous and reversible."""
    return "".join(c if c in _KEY_SAFE else "".join(f"_{b:02X}" for b in c.encode()) for c in text)


def _unescape(text: str) -> str:
    out = bytearray()
    i = 0
    while i < len(text):
        if text[i] == "_":
            out.append(int(text[i + 1:i + 3], 16))
            i += 3
        else:
            out += text[i].encode()
            i += 1
    return out.decode()


def job_key(repo: str, number: int) -> str:
    """The rq job id of `integrate(repo, number)`: the pull request key, e.g.
    `integrate-alice_2Fmemory-12` for alice/memory#12 (rq forbids ':', '/', '#')."""
    if isinstance(number, bool) or not 1 <= int(number) <= MAX_NUMBER:
        raise ValueError(QUEUE_BAD_NUMBER.format(value=number))
    return f"integrate-{_escape(repo_key(repo))}-{int(number)}"


def commit_job_key(repo: str, sha: str) -> str:
    """The rq job id of `integrate_commit(repo, sha)`."""
    return f"commit-{_escape(repo_key(repo))}-{sha.lower()}"


def reconcile_job_key(repo: str) -> str:
    return f"reconcile-{_escape(repo_key(repo))}"


def merge_job_key(repo: str) -> str:
    return f"merge-{_escape(repo_key(repo))}"


def parse_job_key(job_id: str) -> tuple[str, str, str | None]:
    """(kind, repo, rest) back from a job id made here: ('integrate', 'alice/memory', '12')."""
    kind, _, tail = job_id.partition("-")
    if kind in ("reconcile", "merge"):
        return kind, _unescape(tail), None
    body, _, rest = tail.rpartition("-")
    return kind, _unescape(body), rest


# ---------------------------------------------------------------------------------- Lua
_DECIDE = """
if KEYS[5] and not redis.call('SET', KEYS[5], ARGV[4], 'NX', 'EX', ARGV[5]) then
  return 'duplicate'
end
local status = redis.call('HGET', KEYS[1], 'status')
if status == 'queued' or status == 'deferred' or status == 'scheduled' or status == 'created'
   or status == 'ready_to_enqueue' or status == 'rate_limited' then
  return 'pending'
end
if status == 'started' then
  if redis.call('GET', KEYS[3]) == 'ended' then return 'wait' end
  redis.call('SET', KEYS[4], '1', 'EX', ARGV[3])
  return 'dirty'
end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then
  redis.call('DEL', KEYS[3], KEYS[4])
  return 'enqueue'
end
return 'wait'
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

_START = """
redis.call('SET', KEYS[1], 'running', 'EX', ARGV[1])
redis.call('DEL', KEYS[2])
return 1
"""

_FINISH = """
if redis.call('DEL', KEYS[2]) == 1 then return 'again' end
redis.call('SET', KEYS[1], 'ended', 'EX', ARGV[1])
return 'done'
"""


def _run(redis: Redis, script: str, keys: list[str], args: list[Any]) -> Any:
    """EVALSHA, loading the script on the server's first NOSCRIPT (after a restart, say)."""
    sha = _SHAS.get(script) or _SHAS.setdefault(script, hashlib.sha1(script.encode()).hexdigest())
    try:
        value = redis.evalsha(sha, len(keys), *keys, *args)
    except NoScriptError:
        value = redis.eval(script, len(keys), *keys, *args)
    return value.decode() if isinstance(value, bytes) else value


_SHAS: dict[str, str] = {}


# ---------------------------------------------------------------------------------- enqueueing
@dataclass(frozen=True)
class Enqueued:
    """What one enqueue did: `queued` (a new job), `pending` (one was already waiting) or
    `dirty` (one is running and will run once more); `duplicate`: the webhook delivery given
    to it had been seen already, so nothing was done."""

    job_id: str
    outcome: Outcome


def get_queue(redis: Redis, name: str = QUEUE) -> Queue:
    """An rq queue whose jobs are JSON (every queue memrepo makes is made here)."""
    return Queue(name, connection=redis, serializer=SERIALIZER, job_class=GuardedJob)


def enqueue_collapsed(redis: Redis, func: str, args: Iterable[Any], job_id: str, *, queue: str = QUEUE,
                      wait: float = WAIT_SECONDS, delivery: tuple[str, int] | None = None,
                      **options: Any) -> Enqueued:
    """Enqueue `func(*args)` as job `job_id` unless one is already waiting (see the module's
    docstring); `options` go to rq (job_timeout, retry, ...).

    `delivery=(guid, ttl)`: first `bot.dedupe.remember_delivery(redis, guid, ttl)`, in the same script
    (one round trip for a webhook delivery): outcome `duplicate`, and nothing else done, when
    the GUID was seen already. Undo it with `forget_delivery` if this raises."""
    guard, run, dirty = job_state_keys(job_id)
    token = secrets.token_hex(8)
    keys = [Job.key_for(job_id), guard, run, dirty]
    argv: list[Any] = [token, GUARD_MS, DIRTY_TTL]
    if delivery is not None:
        keys.append(delivery_key(delivery[0]))
        argv += [str(int(time.time())), int(delivery[1])]

    def decide() -> str:
        nonlocal keys, argv
        decision = _run(redis, _DECIDE, keys, argv)
        keys, argv = keys[:4], argv[:3]  # remembered on the first pass; a retry only decides
        return decision

    decision = poll(decide, ENQUEUE_BACKOFF, until=lambda d: d != "wait", timeout=wait)
    if decision == "duplicate":
        return Enqueued(job_id, "duplicate")
    if decision == "wait":
        log.warning("job %s is still ending or being enqueued elsewhere after %.1fs; leaving it", job_id, wait)
        return Enqueued(job_id, "pending")
    if decision == "pending":
        return Enqueued(job_id, "pending")
    if decision == "dirty":
        return Enqueued(job_id, "dirty")
    try:
        settings: dict[str, Any] = {"job_timeout": JOB_TIMEOUT, "result_ttl": RESULT_TTL,
                                    "failure_ttl": FAILURE_TTL, "retry": Retry(max=RETRIES)}
        settings.update(options)
        get_queue(redis, queue).enqueue(func, *args, job_id=job_id, **settings)
    finally:
        _run(redis, _RELEASE, [guard], [token])
    return Enqueued(job_id, "queued")


def enqueue_integrate(redis: Redis, repo: str, number: int, *, delivery: tuple[str, int] | None = None) -> Enqueued:
    """`integrate(repo, number)`, collapsed on the pull request key."""
    return enqueue_collapsed(redis, INTEGRATE, (repo, int(number)), job_key(repo, number), delivery=delivery)


def enqueue_integrate_commit(redis: Redis, repo: str, sha: str, *, delivery: tuple[str, int] | None = None) -> Enqueued:
    """`integrate_commit(repo, sha)`: a status or check changed on a commit; the job finds the
    pull requests whose head it is (the payload does not say)."""
    return enqueue_collapsed(redis, INTEGRATE_COMMIT, (repo, sha.lower()), commit_job_key(repo, sha), delivery=delivery)


def enqueue_reconcile(redis: Redis, repo: str, *, delivery: tuple[str, int] | None = None) -> Enqueued:
    """`reconcile(repo)`: `main` moved, so open pull requests may have become (un)mergeable
    without any event of their own."""
    return enqueue_collapsed(redis, RECONCILE, (repo,), reconcile_job_key(repo), delivery=delivery)


def enqueue_merge_ready(redis: Redis, repo: str) -> Enqueued:
    """`merge_ready(repo)`: pull requests were marked ready; one job per repository merges
    every one ready by then in one push (ready ones marked while it runs make it run again)."""
    return enqueue_collapsed(redis, MERGE_READY, (repo,), merge_job_key(repo))


def waiting_pulls(redis: Redis, repo: str, limit: int = 100) -> list[int]:
    """The pull requests of `repo` whose `integrate` job waits in the queue, oldest first (at
    most `limit`): a burst's first job fetches their heads with its own, in one git request,
    rather than each job fetching its own head."""
    wanted = repo_key(repo)
    found: list[int] = []
    for raw in redis.lrange(get_queue(redis, QUEUE).key, 0, -1):
        try:
            kind, of, number = parse_job_key(raw.decode() if isinstance(raw, bytes) else str(raw))
        except ValueError:  # an id this module did not make
            continue
        if kind == "integrate" and of == wanted and number is not None and number.isdecimal():
            found.append(int(number))
            if len(found) >= limit:
                break
    return found


def queue_depths(redis: Redis) -> dict[str, int]:
    """Jobs waiting in each queue (rq's Queue.count)."""
    return {name: get_queue(redis, name).count for name in QUEUES}


P = ParamSpec("P")
R = TypeVar("R")


class Settled(str):
    """A job's result saying nothing is left to do whatever arrives (a merged pull request
    whose head event is out): events that came in while it ran need no second run."""


def collapsing(func: Callable[P, R]) -> Callable[P, R]:
    """Wrap a job function enqueued with `enqueue_collapsed`: events that arrive while it runs
    make it run once more, right after, in the same worker, unless it returned `Settled`.
    Called outside an rq job (tests, `memrepo` commands) it just calls `func`."""

    @functools.wraps(func)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        job = get_current_job()
        if job is None:
            return func(*args, **kwargs)
        redis = job.connection
        _, run_key, dirty = job_state_keys(job.id)
        _run(redis, _START, [run_key, dirty], [int(job.timeout or JOB_TIMEOUT) + 60])
        finished = False
        try:
            while True:
                result = func(*args, **kwargs)
                if _run(redis, _FINISH, [run_key, dirty], [ENDED_TTL]) == "done":
                    finished = True
                    return result
                if isinstance(result, Settled):
                    log.info("job %s: events arrived while it ran; settled, so not running it again", job.id)
                    redis.set(run_key, "ended", ex=ENDED_TTL)
                    finished = True
                    return result
                log.info("job %s: events arrived while it ran; running it again", job.id)
        finally:
            if not finished:  # an exception: rq retries or fails it; don't make receivers wait on it
                redis.set(run_key, "ended", ex=ENDED_TTL)

    return run


# ---------------------------------------------------------------------------------- what a worker runs
@dataclass(frozen=True)
class JobFacts:
    """What a job asks a worker to run, as read from Redis (`readable`: its data was JSON)."""

    func_name: object
    args: object = ()
    kwargs: object = field(default_factory=dict)
    instance: bool = False  # a method of some object rather than a function
    callbacks: tuple[str, ...] = ()  # rq's success, failure and stopped callbacks, by dotted path
    webhooks: bool = False  # rq's job webhooks: URLs the worker would call
    readable: bool = True


def _fits(kind: str, value: object) -> bool:
    if kind == "repo":
        return is_repo_name(value)
    if kind == "number":
        return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_NUMBER
    return isinstance(value, str) and is_object_name(value)  # "sha": a full commit name, lower case


def refusal(job: JobFacts) -> str | None:
    """Why a worker must not run `job` (None: it is one of ours, with the arguments it takes)."""
    if not job.readable:
        return JOB_NOT_JSON
    if not isinstance(job.func_name, str) or job.func_name not in ALLOWED or job.instance:
        return JOB_NOT_OURS.format(func=str(job.func_name)[:200], allowed=", ".join(sorted(ALLOWED)))
    if job.callbacks or job.webhooks:
        return JOB_HOOKS
    kinds = ARGUMENTS[job.func_name]
    args = job.args
    if job.kwargs or not isinstance(args, list | tuple) or len(args) != len(kinds) or \
            not all(_fits(kind, value) for kind, value in zip(kinds, args, strict=True)):
        return JOB_BAD_ARGUMENTS.format(func=job.func_name, expected=", ".join(kinds))
    return None


def job_facts(job: Job) -> JobFacts:
    """The plain facts `refusal` judges, read from an rq job without running anything."""
    callbacks = tuple(str(name) for name in (job._success_callback_name, job._failure_callback_name,
                                             job._stopped_callback_name) if name)
    webhooks = bool(job.webhooks)
    try:
        func_name, instance, args, kwargs = job.func_name, job.instance, job.args, job.kwargs
    except DeserializationError:
        return JobFacts(None, callbacks=callbacks, webhooks=webhooks, readable=False)
    return JobFacts(func_name, args, kwargs, instance is not None, callbacks, webhooks)


class GuardedJob(Job):
    """An rq job that resolves to a function only when `refusal` finds nothing wrong, and never
    to a callback: whatever path of rq's reaches for a job's callable gets one of ours or an
    error, never an import of a name read from Redis."""

    @property
    def func(self) -> Any:
        reason = refusal(job_facts(self))
        if reason is not None:
            raise RefusedJob(reason)
        return super().func

    @property
    def success_callback(self) -> None:
        return None

    @property
    def failure_callback(self) -> None:
        return None

    @property
    def stopped_callback(self) -> None:
        return None


class RefusedJob(Exception):
    """A job `refusal` turned down."""


class Worker(RqWorker):
    """rq's worker, reading JSON jobs and running only memrepo's own (see the module's
    docstring); a refused job fails at once, with one log line, no retry and no webhook."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("serializer", SERIALIZER)
        kwargs.setdefault("job_class", GuardedJob)
        kwargs.setdefault("log_job_description", False)  # a description is whatever the enqueuer wrote
        super().__init__(*args, **kwargs)

    def subscribe(self) -> None:
        """rq's, with its channel's thread looking at the stop flag every PUBSUB_POLL seconds
        rather than every 60: rq unsubscribes before stopping the thread and redis-py waits for
        it, so a worker's exit (the end of a --burst run) could take a minute."""
        self.log.info("Worker %s: subscribing to channel %s", self.name, self.pubsub_channel_name)
        self.pubsub = self.connection.pubsub()
        self.pubsub.subscribe(**{self.pubsub_channel_name: self.handle_payload})
        self.pubsub_thread = self.pubsub.run_in_thread(sleep_time=PUBSUB_POLL, daemon=True,
                                                       exception_handler=self._pubsub_exception_handler)

    def perform_job(self, job: Job, queue: Queue, execution: Execution) -> bool:
        reason = refusal(job_facts(job))
        if reason is None:
            return super().perform_job(job, queue, execution)
        log.error(JOB_REFUSED.format(job=job.id, reason=reason))
        job.retries_left = None  # refused once, refused every time: no retry
        job.webhooks = []
        with self.connection.pipeline() as pipeline:
            pipeline.lrem(queue.intermediate_queue_key, 1, job.id)  # what prepare_job_execution would do
            pipeline.execute()
        self.handle_job_failure(job, queue, started_job_registry=queue.started_job_registry,
                                exc_string=JOB_REFUSED.format(job=job.id, reason=reason), execution=execution)
        return False
