"""The integrator's rq jobs: `integrate(repo, number)`, `integrate_commit(repo, sha)`,
`reconcile(repo)`, and `wake(repo, number)` (a delayed nudge).

`integrate` never trusts a webhook payload: it re-reads the pull request, its reviews, its
validation status and the base through the forge and git (and, from the fetched commits, the
external sources their `Source` trailers name), builds the plain `PullState`,
lets the pure `decide` choose, acts (`bot.integrator.act`) and loops, re-deciding after each
action, until an action says stop or wait. It acts only while holding the repository's lock,
so two merges of one memory never race. The lock is short (`Context.lock_ttl`, seconds) and
renewed by a thread while the job runs, so a crashed worker's lock lapses within seconds and
rq retries the job (`bot.queue` enqueues with `Retry`), which starts by reading again. If a
renewal finds the lock lost (`RepoLock.lost`), the run stops before its next action with
INTEGRATOR_LOCK_LOST: an action already under way (one forge call) finishes, nothing after it
is done, and the retry reads afresh.

Waits: up to `Context.inline_wait` seconds are slept inside the job with the lock released
(GitHub computes mergeability within a second or two; leaving and coming back would cost
more). Longer ones schedule `wake` with rq's scheduler (`memrepo worker` runs it): `wake`
enqueues `integrate` through the collapsing enqueue, so a webhook that arrives meanwhile and
the wake-up end up as one job. The job itself never re-enqueues its own id while it runs
(rq's bookkeeping at the end of the run would overwrite it; see `bot.queue`).

Attempts (`PullState.attempts`: merge sends, re-reads, waits, resolutions) are kept in Redis
per pull request, head sha and number of reviews, so they survive re-enqueues and a new push
or review starts over, as the give-up comment promises.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import timedelta

from redis import Redis
from rq.job import get_current_job

from bot import backoff
from bot import texts as shared_texts
from bot.config import DEFAULT_POLICY, Policy
from bot.contracts import STATUS_CONTEXT, dream_id_of_branch
from bot.errors import MemrepoError
from bot.forge.client import ForgeClient
from bot.forge.errors import NotFound, RateLimited
from bot.forge.shapes import PullRequest
from bot.integrator import act, texts
from bot.integrator.batch import AfterPush, LeftOut, PushAnswer, Ready, after_push, members, merged_by_push
from bot.integrator.context import Context, get_context
from bot.integrator.decide import approved, decide, is_memrepo, latest_reviews, review_needed
from bot.integrator.permissions import own_logins, permissions
from bot.integrator.state import Kind, PullState, Review, Validation
from bot.integrator.workspace import Fetched, PushRefused, Workspace
from bot.notify.events import HeadEvent
from bot.notify.publisher import publish_head
from bot.queue import (
    QUEUE,
    RESULT_TTL,
    WAKE,
    Settled,
    collapsing,
    enqueue_integrate,
    enqueue_merge_ready,
    get_queue,
    job_key,
    waiting_pulls,
)
from bot.redis_keys import (
    REPOS,
    fresh_base_key,
    pr_key,
    progress_key,
    published_key,
    push_refused_key,
    ready_key,
    repo_key,
    resolution_tried_key,
)
from bot.repo_lock import RepoLock, repo_lock
from bot.texts import plural

INTEGRATOR_TOO_MANY_STEPS = "{steps} decisions in one run; coming back shortly to continue"
INTEGRATOR_LOCK_LOST = "the lock on {repo} lapsed while the integrator acted; the job starts over from a fresh read"
INTEGRATOR_PUSH_FORBIDDEN = (
    "The forge does not let the integrator push to {branch} of {repo} ({problem}); pull requests are merged "
    "one by one through the merge API for the next hour. Let the integrator bypass the branch's rules "
    "(docs/architecture.md §6.6) to merge in batches.")
INTEGRATOR_BATCH_NOTHING = "nothing ready to merge"
INTEGRATOR_BATCH_ONE_BY_ONE = "merged one by one through the merge API"

log = logging.getLogger("memrepo.integrator")

PROGRESS_TTL = 24 * 3600
MAX_STEPS = 60  # decisions in one run; a run that needs more comes back later (never loops forever)
MAX_STALE_READS = 5
STALE_READ_PAUSE = backoff.Backoff(0.2, factor=1.0)  # a head git cannot fetch yet: read again after this


# ------------------------------------------------------------------------------------ progress
@dataclass
class Progress:
    """Attempts and what was tried, for one pull request at one head and review count."""

    key: str
    attempts: int = 0
    history: list[str] = field(default_factory=list)


def load_progress(redis: Redis, repo: str, number: int, head_sha: str, reviews: int) -> Progress:
    key = f"{head_sha}:{reviews}"
    raw = redis.get(progress_key(repo, number))
    if raw:
        try:
            data = json.loads(raw)
            if data.get("key") == key:
                return Progress(key, int(data.get("attempts", 0)), [str(h) for h in data.get("history", [])])
        except (ValueError, TypeError, AttributeError):
            pass
    return Progress(key)


def save_progress(redis: Redis, repo: str, number: int, progress: Progress) -> None:
    data = {"key": progress.key, "attempts": progress.attempts, "history": progress.history[-50:]}
    redis.set(progress_key(repo, number), json.dumps(data), ex=PROGRESS_TTL)


FRESH_BASE_SECONDS = 5.0  # a base tip fetched or pushed this recently is decided on without fetching it again


def remember_base(redis: Redis, repo: str, branch: str, sha: str | None) -> None:
    """The base branch's tip as a fetch or a push just left it, for the jobs of the next few seconds."""
    if sha:
        redis.set(fresh_base_key(repo, branch), sha, px=int(FRESH_BASE_SECONDS * 1000))


# ------------------------------------------------------------------------------------ one run
@dataclass(frozen=True)
class RunResult:
    """How a run ended: `summary` is its last decision's reason; `wait` seconds when it must
    come back (None: an event will bring it back, or nothing is left to do)."""

    summary: str
    kind: Kind | None = None
    wait: float | None = None
    settled: bool = False  # merged and its head event published: nothing can change any more


class _Stale(Exception):
    """The head the forge reported is not fetchable yet (it moved meanwhile): read again."""


class Integration:
    """One run of `integrate` for one pull request, under the repository's lock."""

    def __init__(self, ctx: Context, repo: str, number: int, client: ForgeClient, lock: RepoLock) -> None:
        self.ctx = ctx
        self.repo = repo
        self.number = int(number)
        self.client = client
        self.lock = lock
        self.workspace = Workspace(ctx.work_dir, repo, ctx.remote(repo))
        self.validations: dict[tuple[str, str], Validation] = {}
        self.progress = Progress("")
        self.key = pr_key(repo, number)
        # Merging by push, the commit status is read only when a decision would write one (a
        # pull request merged at once has none to read: one request fewer per dream).
        self.lazy_status = False
        self.status_read = False

    # ---------------------------------------------------------------------- reading
    def read(self) -> tuple[PullRequest, PullState, Policy]:
        """The pull request and everything decide needs, as the forge and git have it now."""
        for n in range(MAX_STALE_READS):
            try:
                return self._read_once()
            except _Stale:
                backoff.pause(STALE_READ_PAUSE, n)
        return self._read_once()

    def _read_once(self) -> tuple[PullRequest, PullState, Policy]:
        pull = self.client.get_pull_request(self.number)
        state = PullState.from_pull(pull)
        policy = DEFAULT_POLICY
        reviews: tuple[Review, ...] = ()
        known: dict[str, object] = {"head_published": act.is_published(self.ctx.redis, self.repo, self.number)}
        if pull.state == "open" and not pull.merged and is_memrepo(state) and pull.head_sha:
            with ThreadPoolExecutor(max_workers=1) as pool:  # git and REST reads, side by side
                fetching = pool.submit(self._fetch, pull)
                reviews = tuple(Review(r.author, r.state, r.commit_id, order=i)
                                for i, r in enumerate(self.client.list_reviews(self.number)))
                combined = None if self.lazy_status else self.client.combined_status(pull.head_sha)
                known.update(self._who(pull, reviews))
                fetched = fetching.result()
            if not self.workspace.has(pull.head_sha):
                raise _Stale()
            base_sha = fetched.base_sha or pull.base_sha
            policy = self.workspace.policy(base_sha)
            status = None if combined is None else \
                next((s.state for s in combined.statuses if s.context == STATUS_CONTEXT), None)
            self.status_read = combined is not None
            known.update(base_sha=base_sha, reviews=reviews, status=status,
                         merges_cleanly=self.workspace.merges_cleanly(base_sha, pull.head_sha),
                         changed_paths=self.workspace.changed_paths(base_sha, pull.head_sha),
                         **self.workspace.commit_facts(base_sha, pull.head_sha, pull.head_ref),
                         validation=self.validations.get((pull.head_sha, base_sha)),
                         resolution_tried=act.resolution_tried(self.ctx.redis, self.repo, self.number, pull.head_sha))
        self.progress = load_progress(self.ctx.redis, self.repo, self.number, pull.head_sha, len(reviews))
        known.update(attempts=self.progress.attempts, history=tuple(self.progress.history))
        return pull, self._fresh_approvers(replace(state, **known), policy), policy  # type: ignore[arg-type]

    def _fetch(self, pull: PullRequest) -> Fetched:
        """The base and the head to decide on. Merging by push, a head the mirror already
        holds is not fetched again while the base's tip was fetched or pushed less than
        `FRESH_BASE_SECONDS` ago (GitHub's own `base.sha` may be far older; the batch fetches
        `main` and every head afresh and validates each step of its chain before it pushes, so
        nothing merges on this read alone), and a head it lacks is fetched together with the
        heads of the other pull requests of the repository whose jobs wait: a burst of dreams
        costs a git request every few seconds, not one a pull request."""
        base_ref = pull.base_ref or "main"
        if not self.lazy_status:
            return self.workspace.fetch(base_ref, self.number)
        raw = self.ctx.redis.get(fresh_base_key(self.repo, base_ref))
        fresh = raw.decode() if isinstance(raw, bytes) else raw
        # another worker's mirror, on another machine, may not hold what it fetched
        if fresh and self.workspace.has(fresh) and self.workspace.has(pull.head_sha):
            return Fetched(str(fresh), pull.head_sha)
        others = [n for n in waiting_pulls(self.ctx.redis, self.repo) if n != self.number]
        base_sha, heads = self.workspace.fetch_heads(base_ref, [self.number, *others])
        remember_base(self.ctx.redis, self.repo, base_ref, base_sha)
        return Fetched(base_sha, heads.get(self.number))

    def _fresh_approvers(self, state: PullState, policy: Policy) -> PullState:
        """The state with its reviewers' permissions read from the forge itself, not the
        cache, when their approval would merge a change that needs one: a permission taken
        away a moment ago must not merge it."""
        if not (review_needed(state, policy) and approved(state)):
            return state
        reviewers = [r.author for r in latest_reviews(state.reviews, state.author).values()]
        fresh = dict(permissions(self.ctx.redis, self.client, self.repo, reviewers, fresh=True))
        return replace(state, permissions=tuple(sorted({**dict(state.permissions), **fresh}.items())))

    def _who(self, pull: PullRequest, reviews: tuple[Review, ...]) -> dict[str, object]:
        """Who is who, as the forge says: the author's and each reviewer's permission, the
        accounts of the commits' authors and of whoever pushed to the branch (asked only when
        there are reviews to weigh), and the integrator's own accounts."""
        redis = self.ctx.redis
        found = dict(permissions(redis, self.client, self.repo, (pull.author, *(r.author for r in reviews))))
        return {"author_permission": found.get(pull.author.casefold(), "none"),
                "permissions": tuple(found.items()),
                "commit_authors": self.client.pull_commit_accounts(self.number) if reviews else (),
                "pushers": self.client.branch_pushers(pull.head_ref, pull.head_sha) if reviews else (),
                "integrator": own_logins(redis, self.client, self.repo, self.ctx.bot_login)}

    # ---------------------------------------------------------------------- the loop
    def _count(self, note: str, attempt: bool) -> None:
        if attempt:
            self.progress.attempts += 1
        if note:
            self.progress.history.append(note)
        if attempt or note:
            save_progress(self.ctx.redis, self.repo, self.number, self.progress)

    def _pause(self, seconds: float) -> None:
        """Sleep without holding the repository, so other pull requests of it move meanwhile."""
        if seconds <= 0:
            return
        lock = self.lock
        lock.release()
        time.sleep(seconds)
        if not lock.acquire(timeout=self.ctx.lock_wait_seconds):
            raise MemrepoError(shared_texts.REPO_LOCK_BUSY.format(repo=self.repo, seconds=self.ctx.lock_wait_seconds))

    def _still_held(self) -> None:
        """Act only under the lock: a renewal that found it lost (another integrator may
        hold it now) ends the run here."""
        if self.lock.lost.is_set():
            raise MemrepoError(INTEGRATOR_LOCK_LOST.format(repo=self.repo))

    def _ready(self, pull: PullRequest) -> Callable[[int, str], None]:
        """Mark this pull request ready for the next batch, with the head the decision validated."""
        def mark(number: int, sha: str) -> None:
            labels = [label for label in pull.labels if label in act.TIDIED_LABELS]
            entry = {"sha": sha, "base": pull.base_ref or "main", "branch": pull.head_ref, "labels": labels}
            self.ctx.redis.hset(ready_key(self.repo), str(number), json.dumps(entry))
            enqueue_merge_ready(self.ctx.redis, self.repo)
        return mark

    def _status(self, sha: str) -> str | None:
        combined = self.client.combined_status(sha)
        self.status_read = True
        return next((s.state for s in combined.statuses if s.context == STATUS_CONTEXT), None)

    def run(self) -> RunResult:
        tuning = self.ctx.tuning
        if tuning.merge_by_push and self.ctx.redis.exists(push_refused_key(self.repo)):
            tuning = replace(tuning, merge_by_push=False)  # the forge refused our push: the merge API
        self.lazy_status = tuning.merge_by_push
        pull, state, policy = self.read()
        actor = act.Actor(self.repo, self.client, self.workspace, self.ctx.redis, pull, policy, self.ctx.resolver)
        if tuning.merge_by_push:
            actor.ready = self._ready(pull)
        reason = ""
        kind: Kind | None = None
        for _ in range(MAX_STEPS):
            action = decide(state, policy, tuning)
            if action.status is not None and not self.status_read and state.head_sha:
                state = replace(state, status=self._status(state.head_sha))  # the write may be needless
                action = decide(state, policy, tuning)
            reason, kind = action.reason, action.kind
            self._still_held()
            log.info("%s: %s (%s)", self.key, action.kind.value, action.reason)
            applied = act.apply(actor, state, action)
            counted = action.kind in (Kind.MERGE, Kind.REREAD, Kind.WAIT, Kind.RESOLVE)
            self._count(applied.note, counted)
            if not self.lock.extend():  # it lapsed: another integrator may act now; start over
                raise MemrepoError(INTEGRATOR_LOCK_LOST.format(repo=self.repo))
            if applied.next is act.Next.STOP:
                return RunResult(reason, kind, settled=(applied.state or state).head_published)
            if applied.next is act.Next.DECIDE:
                assert applied.state is not None
                state = replace(applied.state, attempts=self.progress.attempts,
                                history=tuple(self.progress.history))
                if state.validation is not None:
                    self.validations[(state.head_sha, state.base_sha)] = state.validation
                continue
            if applied.delay > self.ctx.inline_wait:
                return RunResult(reason, kind, wait=applied.delay)
            self._pause(applied.delay)
            if applied.check_merged:
                self.client.is_merged(self.number)  # GitHub's own answer first; the read below carries it
            pull, state, policy = self.read()
            actor.pull, actor.policy = pull, policy
        return RunResult(INTEGRATOR_TOO_MANY_STEPS.format(steps=MAX_STEPS), kind, wait=1.0)


# ------------------------------------------------------------------------------------ batches
PUSH_REFUSED_TTL = 3600  # after the forge refused a push to the default branch, the merge API this long


class Batch:
    """One run of `merge_ready` for one repository, under its lock: every pull request marked
    ready goes into one chain of merge commits on the default branch, pushed once
    (`bot.integrator.batch` decides who goes in and what a refusal means)."""

    def __init__(self, ctx: Context, repo: str, client: ForgeClient, lock: RepoLock) -> None:
        self.ctx = ctx
        self.repo = repo
        self.client = client
        self.lock = lock
        self.workspace = Workspace(ctx.work_dir, repo, ctx.remote(repo))

    def _entries(self) -> dict[int, dict]:
        found: dict[int, dict] = {}
        for key, value in self.ctx.redis.hgetall(ready_key(self.repo)).items():
            try:
                number, entry = int(key), json.loads(value)
            except (ValueError, TypeError):
                continue
            if isinstance(entry, dict) and isinstance(entry.get("sha"), str):
                found[number] = entry
        return found

    def _back_to_its_job(self, number: int, why: str) -> None:
        """Out of the batch: its own job decides again (and says why, if anything is wrong)."""
        self.ctx.redis.hdel(ready_key(self.repo), str(number))
        log.info("%s: left out of the batch: %s", pr_key(self.repo, number), why)
        enqueue_integrate(self.ctx.redis, self.repo, number)

    def run(self) -> str:
        entries = self._entries()
        if not entries:
            return INTEGRATOR_BATCH_NOTHING
        base_ref = next(iter(entries.values())).get("base") or "main"
        ready = [Ready(n, e["sha"]) for n, e in entries.items() if (e.get("base") or "main") == base_ref]
        owner = self.repo.partition("/")[0]
        rebuilds = 0
        while True:
            base_sha, heads = self.workspace.fetch_heads(base_ref, [r.number for r in ready])
            remember_base(self.ctx.redis, self.repo, base_ref, base_sha)
            if base_sha is None:
                raise MemrepoError(texts.INTEGRATOR_GIT_FAILED.format(what="fetch", repo=self.repo,
                                                                      problem=base_ref))
            merged = [r.number for r in ready if act.is_published(self.ctx.redis, self.repo, r.number)]
            taken, left = members(ready, heads, merged)
            for number, why in left.items():
                if why is LeftOut.MERGED:
                    self.ctx.redis.hdel(ready_key(self.repo), str(number))
                else:
                    self._back_to_its_job(number, why.value)
            policy = self.workspace.policy(base_sha)
            tip, chain = base_sha, []
            for member in taken:
                branch = str(entries[member.number].get("branch") or "").removeprefix("refs/heads/")
                title = f"Merge pull request #{member.number} from {owner}/{branch}"
                commit, problems = self.workspace.merge_onto(tip, member.sha, title, policy, self.ctx.resolver)
                if commit is None:
                    self.ctx.redis.set(resolution_tried_key(self.repo, member.number, member.sha), "1",
                                       ex=act.TRIED_TTL)
                    self._back_to_its_job(member.number, "; ".join(problems[:3]) or LeftOut.CONFLICT.value)
                    continue
                chain.append((member.number, member.sha, commit))
                tip = commit
            ready = [Ready(n, sha) for n, sha, _ in chain]
            if not chain:
                return INTEGRATOR_BATCH_NOTHING
            if self.lock.lost.is_set():
                raise MemrepoError(INTEGRATOR_LOCK_LOST.format(repo=self.repo))
            try:
                answer = PushAnswer.PUSHED if self.workspace.push(tip, base_ref) else PushAnswer.MOVED
            except PushRefused as exc:
                answer = PushAnswer.REFUSED
                log.warning(INTEGRATOR_PUSH_FORBIDDEN.format(branch=base_ref, repo=self.repo, problem=exc))
                self.ctx.redis.set(push_refused_key(self.repo), str(exc), ex=PUSH_REFUSED_TTL)
            step = after_push(answer, rebuilds)
            if step is AfterPush.REBUILD:
                rebuilds += 1
                continue
            if step is AfterPush.ONE_BY_ONE:
                return self._one_by_one(chain)
            remember_base(self.ctx.redis, self.repo, base_ref, tip)  # main is what was just pushed
            return self._settle(chain, merged_by_push(chain, tip), base_sha, tip, entries)

    def _one_by_one(self, chain: list[tuple[int, str, str]]) -> str:
        """Each member through the merge API with its head sha (the forge refuses a moved head);
        its own job then publishes it, or decides again."""
        for number, sha, _ in chain:
            if not self.ctx.redis.exists(push_refused_key(self.repo)):
                result = self.client.merge(number, sha, method="merge")
                log.info("%s: merge at %s: %s", pr_key(self.repo, number), sha[:12], result.outcome.value)
            self._back_to_its_job(number, INTEGRATOR_BATCH_ONE_BY_ONE)
        return INTEGRATOR_BATCH_ONE_BY_ONE

    def _settle(self, chain: list[tuple[int, str, str]], done: dict[int, str], before: str, tip: str,
                entries: dict[int, dict]) -> str:
        """The push landed: each member is merged by it (the forge says so on its own); mark
        them published, tidy the labels a person saw, and publish the new head once."""
        redis = self.ctx.redis
        for number, commit in done.items():
            redis.set(published_key(self.repo, number), commit, ex=act.PUBLISHED_TTL)
            redis.hdel(ready_key(self.repo), str(number))
            act.tidy_labels(self.client, self.repo, number, entries.get(number, {}).get("labels") or ())
        last = chain[-1][0]
        branch = str(entries.get(last, {}).get("branch") or "").removeprefix("refs/heads/")
        publish_head(redis, HeadEvent(repo=self.repo, sha=tip, before=before, cause="merge", pr=last,
                                      dream_id=dream_id_of_branch(branch)))
        log.info("%s: merged %s in one push: %s", self.repo, plural(len(done), "pull request"),
                 ", ".join(f"#{n}" for n in sorted(done)))
        return f"merged {len(done)} in one push, main at {tip[:12]}"


@collapsing
def merge_ready(repo: str, *, context: Context | None = None) -> str:
    """Merge every pull request of `repo` the decision marked ready, in one push of its
    default branch."""
    ctx = context or get_context()
    client = ctx.forge(repo)
    try:
        with repo_lock(ctx.redis, repo, ctx.lock_ttl, wait=ctx.lock_wait_seconds) as lock:
            return Batch(ctx, repo, client, lock).run()
    finally:
        client.close()


# ------------------------------------------------------------------------------------ scheduling
def wake_job_id(repo: str, number: int) -> str:
    return "wake-" + job_key(repo, number).removeprefix("integrate-")


def schedule_wake(redis: Redis, repo: str, number: int, delay: float) -> None:
    """`integrate(repo, number)` again in `delay` seconds, through rq's scheduler (the worker
    runs it with `with_scheduler=True`)."""
    queue = get_queue(redis, QUEUE)
    queue.enqueue_in(timedelta(seconds=max(0.0, delay)), WAKE, repo, int(number), job_id=wake_job_id(repo, number),
                     result_ttl=RESULT_TTL, job_timeout=60)
    log.info("%s: back in %.1fs", pr_key(repo, number), delay)


def remember_repo(redis: Redis, repo: str) -> None:
    redis.sadd(REPOS, repo_key(repo))


def known_repos(redis: Redis) -> list[str]:
    return sorted(m.decode() if isinstance(m, bytes) else str(m) for m in redis.smembers(REPOS))


# ------------------------------------------------------------------------------------ the jobs
@collapsing
def integrate(repo: str, number: int, *, context: Context | None = None) -> str:
    """Bring one pull request as far as it can go now; returns what the last decision said."""
    ctx = context or get_context()
    remember_repo(ctx.redis, repo)
    if act.is_published(ctx.redis, repo, number):  # merged and told: the forge's `closed` delivery needs no read
        return Settled("already merged and its new head published")
    client = ctx.forge(repo)
    try:
        with repo_lock(ctx.redis, repo, ctx.lock_ttl, wait=ctx.lock_wait_seconds) as lock:
            try:
                result = Integration(ctx, repo, number, client, lock).run()
            except NotFound:
                log.info("%s: gone", pr_key(repo, number))
                return "the pull request no longer exists"
            except RateLimited as exc:
                result = RunResult(str(exc), None, wait=max(1.0, exc.retry_after))
    finally:
        client.close()
    if result.wait is not None:
        schedule_wake(ctx.redis, repo, number, result.wait)
    return Settled(result.summary) if result.settled else result.summary


def wake(repo: str, number: int) -> str:
    """A scheduled nudge: enqueue `integrate` (collapsed with any job already waiting)."""
    job = get_current_job()
    redis = job.connection if job is not None else get_context().redis
    return enqueue_integrate(redis, repo, number).outcome


@collapsing
def integrate_commit(repo: str, sha: str, *, context: Context | None = None) -> list[int]:
    """A status or check changed on `sha`: enqueue the open pull requests whose head it is."""
    ctx = context or get_context()
    remember_repo(ctx.redis, repo)
    client = ctx.forge(repo)
    try:
        pulls = client.pull_requests_for_commit(sha)
    finally:
        client.close()
    numbers = [p.number for p in pulls if p.state == "open" and p.head_sha.lower() == sha.lower()
               and is_memrepo(PullState.from_pull(p))]
    for number in numbers:
        enqueue_integrate(ctx.redis, repo, number)
    return numbers


@collapsing
def reconcile(repo: str, *, context: Context | None = None) -> list[int]:
    """Enqueue every open memrepo pull request (labelled, or on a memrepo/ branch) that has no
    job waiting: a lost webhook delivery delays a merge but never strands it."""
    ctx = context or get_context()
    remember_repo(ctx.redis, repo)
    client = ctx.forge(repo)
    try:
        pulls = client.list_open_pull_requests()
    finally:
        client.close()
    queued = []
    for pull in pulls:
        if not is_memrepo(PullState.from_pull(pull)):
            continue
        if enqueue_integrate(ctx.redis, repo, pull.number).outcome == "queued":
            queued.append(pull.number)
    log.info("reconcile %s: %s, %d enqueued", repo, plural(len(pulls), "open memrepo pull request"), len(queued))
    return queued
