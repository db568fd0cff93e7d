"""`memrepo follow`'s loop: read the folder, ask bot/follow/decide.py, do what it says.

Every git operation runs on this one thread, through sync (fetch, fast-forward or replay,
push; never forced), so a harness's commit, a head event and a poll can never race each other
here. Before a push, each commit the harness made is routed as the memory tool routes a call
(the `router`, bot/agent's CommitRouter, handed in by the command): those the policy holds for
review are taken off the folder's main (kept on a ref) and proposed as a pull request once the
allowed ones are pushed. The harness's commits are noticed by reading HEAD from the ref files every LOCAL_TICK;
head events (bot/notify's HeadSubscriber, opened with the clone's own forge token) only wake
the loop. Signals stop it between passes, never inside one."""

from __future__ import annotations

import contextlib
import random
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol

import pygit2

from bot.errors import MemrepoError
from bot.follow import decide, guard, marker, texts
from bot.follow.decide import State
from bot.follow.transcripts import Importer
from bot.memfs import MemoryRepo, refs
from bot.memfs import sync as memfs_sync
from bot.memfs.sync import TRACKING_REF, ReplayFailed, contains, redact, remote_url, replay_commit, sync
from bot.notify.follower import HeadSubscriber
from bot.pullrequest import git_token
from bot.texts import Text

FOLLOW_NOT_CONNECTED = ("{path} is not connected to a forge; connect it first with "
                        "`memrepo repository set URL --repo {path}`")
FOLLOW_STARTED = "memrepo follow: following {path} with {url} ({how}); Ctrl-C stops"
FOLLOW_HOW_EVENTS = "head events from {events}; a fetch every {seconds:g}s while the stream is down"
FOLLOW_IMPORT_FAILED = "transcripts not imported ({problem}); trying again every {seconds:g}s"
FOLLOW_FAILED = "not synced ({reason}); trying again, less often while it lasts"
FOLLOW_HELD = Text("held back from main, for review: {count:|commit|commits} ({subjects}), because {reasons}; "
                   "kept at {ref}")
FOLLOW_HELD_PROPOSED = "pull request #{number} ({url}) waits for review: {subjects}, because {reasons}"
FOLLOW_HELD_NOT_PROPOSED = ("commits held back from main ({subjects}) are kept at {ref}; opening their pull request "
                            "failed ({problem}); trying again at the next pass")
FOLLOW_TURN_NAMED = "pull request #{number} ({url}) now names the turn behind {subjects}, imported after it opened"
FOLLOW_TURN_NOT_NAMED = ("pull request #{number} could not be told the turn behind it ({problem}); trying again at "
                         "the next import")
FOLLOW_HELD_DONE = "pull request #{number} was {state}; {ref} is no longer kept"
# Commits a harness made in a shared memory's projection.
FOLLOW_SHARED_PROPOSED = Text(
    "{name}: pull request #{number} ({url}) on the shared memory now holds the {count:|commit|commits} made in its "
    "projection, waiting for its review; the projection is back on its main, the commits kept at {ref}")
FOLLOW_SHARED_NOT_PROPOSED = Text(
    "{name}: the {count:|commit|commits} made in its projection wait there; opening their pull request on the "
    "shared memory failed, the next pass tries again: {problem}")
FOLLOW_SHARED_READ_ONLY = Text(
    "{name}: the {count:|commit|commits} made in its projection at {path} stay there: this agent attached it "
    "read-only; propose them on {url} itself")
FOLLOW_SHARED_SETTLED = "{name}: pull request #{number} on the shared memory was {state}; {ref} is removed"

LOCAL_TICK = 0.5  # seconds between two looks at the folder's HEAD
HOOK_KEY = "letta.memoryRepository.url"  # where Letta Code's post-commit hook reads the URL it pushes to

HELD_PREFIX = "refs/memrepo/held/"

SHARED_PROPOSED_PREFIX = "refs/memrepo/shared-proposed/"  # a projection's commits, once proposed

Outcome = Literal["idle", "waiting", "synced", "set-aside", "failed"]


class Router(Protocol):
    """How a harness's commits are judged and proposed (bot/agent/write_path.py's CommitRouter)."""

    def route(self, repo: MemoryRepo, commit: str, parent: str | None, base: str) -> Any: ...

    def propose(self, repo: MemoryRepo, commits: tuple[tuple[str, str | None], ...], *, base: str,
                tip: str, memory_repository: str | None = None) -> Any: ...

    def pull_state(self, repo: MemoryRepo, number: int) -> str: ...

    def turn_known(self, repo: MemoryRepo, commits: tuple[tuple[str, str | None], ...]) -> bool: ...

    def name_turn(self, repo: MemoryRepo, commits: tuple[tuple[str, str | None], ...], number: int) -> str: ...


def uncommitted(repo: MemoryRepo) -> list[str]:
    """Paths the harness has not committed: changed, staged, and new files git does not ignore
    (a file written a moment before its `git add`, which taking the forge's main could
    overwrite). Letta Code counts them the same way before it touches its folder."""
    settled = (pygit2.enums.FileStatus.CURRENT, pygit2.enums.FileStatus.IGNORED)
    return sorted(path for path, flags in repo.git.status(untracked_files="normal").items() if flags not in settled)


class Follower:
    """Keeps the clone at `root` on one main with its origin. `say` prints a line for a person."""

    def __init__(self, root: Path, *, events: str | None, poll: float, say: Callable[[str], None],
                 importer: Importer | None = None, router: Router | None = None) -> None:
        repo = MemoryRepo.open(root)
        url = remote_url(repo)
        if url is None:
            raise MemrepoError(FOLLOW_NOT_CONNECTED.format(path=repo.root))
        self.root = repo.root
        self.url = url
        self.events = events
        self.poll = poll
        self.say = say
        self.importer = importer
        self.router = router
        # the guard keeps the harness's own pushes (Letta Code's post-commit hook) to what the
        # router lets through, so nothing held reaches the forge's main before a pass sees it
        self.guarded = guard.install(repo, sys.executable) if router is not None else None
        if self.guarded is not None and self.guarded.chained is not None:
            say(texts.GUARD_CHAINED.format(chained=self.guarded.chained, hook=self.guarded.hook))
        self.state = State()
        self.subscriber: HeadSubscriber | None = None
        self._said: str | None = None
        self._unproposed = False  # this pass could not open a held commit's pull request
        self._awaits_turns = False  # following (not --once) with transcripts: a proposal waits for its turn
        self._import_said: str | None = None
        self._next_import = 0.0
        self._stamp: object = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._announced = threading.Event()

    # ------------------------------------------------------------------ control
    def stop(self) -> None:
        """Ask the loop to end after the pass under way (safe from a signal handler)."""
        self._stop.set()
        self._wake.set()

    def announced(self) -> None:
        """The event stream says the forge's main moved (HeadSubscriber's syncer: it runs on
        the stream's thread, so it only wakes the loop)."""
        self._announced.set()
        self._wake.set()

    # ------------------------------------------------------------------ running
    def once(self) -> int:
        """One pass now: 0 when the folder and the forge agree afterwards (or it waits for the
        harness), 1 when a commit was set aside, a held commit's pull request could not be
        opened, or nothing could be synced or imported."""
        imported = self._import(time.monotonic())  # first: a held commit's pull request quotes its turn
        outcome = self.step()
        if imported:
            self._name_turns()
        return 1 if outcome in ("failed", "set-aside") or self._unproposed or not imported else 0

    def run(self) -> int:
        """Follow until stopped: one follower per folder, shown in `repository status`."""
        folder = marker.place(MemoryRepo.open(self.root))
        self._awaits_turns = self.importer is not None and self.router is not None
        with marker.claim(folder, self.root):
            self.say(self._started())
            self._hook_notice()
            record = marker.new_record(bool(self.events), self.poll)
            heartbeat = threading.Thread(target=self._beat, args=(folder, record), name="memrepo-follow-heartbeat",
                                         daemon=True)
            heartbeat.start()
            try:  # a subscriber that cannot start still stops the heartbeat and takes the record out
                if self.events:
                    self.subscriber = HeadSubscriber(self.root, self.events, "", syncer=self.announced).start()
                self._loop()
            finally:
                self._stop.set()
                if self.subscriber is not None:
                    self.subscriber.stop()
                heartbeat.join()
                marker.remove(folder)
        self.say(f"memrepo follow: stopped following {self.root}")
        return 0

    def _started(self) -> str:
        how = (FOLLOW_HOW_EVENTS.format(events=redact(self.events), seconds=self.poll) if self.events
               else f"a fetch every {self.poll:g}s; no event stream was given (--events)")
        return FOLLOW_STARTED.format(path=self.root, url=redact(self.url), how=how)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                outcome = self.step()
                now = time.monotonic()
                if decide.import_due(outcome in ("synced", "set-aside"), self._transcripts_stamp(), self._stamp, now,
                                     self._next_import) and self._import(now):
                    self._name_turns()
            except MemrepoError as exc:  # the folder unreadable for a moment (rewritten, moved): try again
                self._failed(str(exc), time.monotonic())
            except Exception as exc:  # never end a follower silently: say it, back off, go on
                self._failed(f"{type(exc).__name__}: {redact(str(exc))}", time.monotonic())
            self._wake.wait(LOCAL_TICK)
            self._wake.clear()

    def _beat(self, folder: Path, record: marker.Record) -> None:
        """Write the record now and every HEARTBEAT seconds until the loop stops."""
        while True:
            marker.write(folder, replace(record, seen=time.time()))
            if self._stop.wait(marker.HEARTBEAT):
                return

    # ------------------------------------------------------------------ one pass
    def step(self) -> Outcome:
        """Look at the folder; sync when a pass is due and the tree is at rest."""
        now = time.monotonic()
        if self._announced.is_set():
            self._announced.clear()
            self.state = decide.announce(self.state)
        polling = self.subscriber is None or not self.subscriber.connected.is_set()
        if not decide.due(self.state, refs.resolve(self.root), now, polling):
            return "idle"
        repo = MemoryRepo.open(self.root)
        busy = (Path(repo.git.path) / "index.lock").exists()
        reason = decide.wait_reason(self.root, repo.branch(), uncommitted(repo), busy)
        if reason is not None:
            self._tell(reason)
            return "waiting"
        return self._sync(repo, now)

    def _sync(self, repo: MemoryRepo, now: float) -> Outcome:
        try:
            git_token.ensure(repo)  # a recorded GitHub App fetches and pushes as itself
            self._hold(repo)
            result = sync(repo)
        except MemrepoError as exc:  # the tree changed under the pass, HEAD moved, origin removed
            return self._failed(str(exc), now)
        if not result.pushed:
            return self._failed(result.summary, now)
        self.state = decide.succeeded(self.state, repo.head_sha(), now, self.poll)
        self._said = None
        if result.sent or result.pulled or result.replayed or result.set_aside:
            self.say(result.summary)
        self._settle_held(repo)
        self._propose_held(repo)
        self._follow_shared(repo)
        return "set-aside" if result.set_aside else "synced"

    def _follow_shared(self, repo: MemoryRepo) -> None:
        """Bring each attached shared memory's projection to its forge's main with the folder's
        own pass (a poll, a head event, a commit), saying what moved or failed once."""
        from bot.memfs import shared_projection

        try:
            found = shared_projection.attachments(repo)
        except MemrepoError as exc:
            self._tell(FOLLOW_FAILED.format(reason=exc))
            return
        for attachment in found:
            self._propose_projection(repo, attachment)
            done = shared_projection.sync_one(repo, attachment, ready=git_token.ensure)
            if not done.ok or done.changed:
                self._tell(done.line)

    def _propose_projection(self, repo: MemoryRepo, attachment: Any) -> None:
        """The commits a harness made in a shared memory's projection (Letta Code's "edit and
        commit there") become one pull request on the shared repository, judged by its policy
        and always reviewed (CommitRouter reads the projection's mark), whose provenance names
        the agent and its own memory; the projection's main then goes back to the forge's, the
        commits kept on a ref. Nothing is pushed to the shared main: the pre-push guard, put in
        the projection here, refuses the harness's own push of them."""
        from bot.memfs import shared_projection

        projection = shared_projection.open_projection(repo, attachment)
        if self.router is None or projection is None:
            return
        shared_projection.mark(projection, attachment.name, repo)
        with contextlib.suppress(MemrepoError, OSError):  # a user's hook in the way: the pass goes on
            guard.install(projection, sys.executable)
        try:  # the memory's recorded identity fetches and pushes here (sync_one says why it cannot)
            git_token.ensure(projection)
        except MemrepoError:
            return
        self._settle_projection(projection, attachment.name)
        head = projection.head_sha()
        known = projection.resolve(TRACKING_REF)  # the forge's main as last fetched
        if head is None or (known is not None and contains(projection, known, head)):
            return  # the harness committed nothing here: no fetch of ours (sync_one's follows)
        base = memfs_sync.status(projection, fetch=True).remote_head
        if head is None or base is None or contains(projection, base, head):
            return
        commits = tuple(guard.harness_commits(projection, head, base))
        if not commits:
            return
        if attachment.read_only:
            self._tell(FOLLOW_SHARED_READ_ONLY.format(name=attachment.name, count=len(commits),
                                                            path=projection.root, url=attachment.url))
            return
        if uncommitted(projection):
            return  # the harness is still writing there: the next pass proposes what it committed
        tip = head if contains(projection, base, commits[0][1] or base) else self._replayed(projection, commits, base)
        own = remote_url(repo)
        try:
            made = self.router.propose(projection, commits, base=base, tip=tip,
                                       memory_repository=None if own is None else
                                       shared_projection.without_credentials(own))
        except MemrepoError as exc:
            self._unproposed = True
            self._tell(FOLLOW_SHARED_NOT_PROPOSED.format(name=attachment.name, count=len(commits),
                                                               problem=redact(str(exc))))
            return
        with projection.lock():
            projection.git.references.create(f"{SHARED_PROPOSED_PREFIX}{made.number}", head, force=True)
            projection.move_branch(base, expected=head)
        self.say(FOLLOW_SHARED_PROPOSED.format(name=attachment.name, count=len(commits), number=made.number,
                                                     url=made.url, ref=f"{SHARED_PROPOSED_PREFIX}{made.number}"))

    def _settle_projection(self, projection: MemoryRepo, name: str) -> None:
        """Forget the commits kept for a pull request on the shared memory once it was merged
        (they reach the projection with its main) or closed (refused)."""
        assert self.router is not None
        for ref in list(projection.git.references):
            if not ref.startswith(SHARED_PROPOSED_PREFIX) or not ref[len(SHARED_PROPOSED_PREFIX):].isdigit():
                continue
            number = int(ref[len(SHARED_PROPOSED_PREFIX):])
            try:
                state = self.router.pull_state(projection, number)
            except MemrepoError:
                continue
            if state != "open":
                with contextlib.suppress(KeyError, pygit2.GitError):
                    projection.git.references.delete(ref)
                self.say(FOLLOW_SHARED_SETTLED.format(name=name, number=number, state=state, ref=ref))

    @staticmethod
    def _replayed(repo: MemoryRepo, commits: tuple[tuple[str, str | None], ...], base: str) -> str:
        """`commits` replayed onto `base`, or their last commit when they do not apply (the
        integrator resolves what conflicts)."""
        tip = repo.git[base].peel(pygit2.Commit)
        try:
            for sha, _ in commits:
                tip = replay_commit(repo, repo.git[sha].peel(pygit2.Commit), tip)
        except ReplayFailed:
            return commits[-1][0]
        return str(tip.id)

    # ------------------------------------------------------------------ commits held for review
    def _hold(self, repo: MemoryRepo) -> None:
        """Take off main the commits the policy holds for review, before anything is pushed:
        main becomes the commits before the first held one plus the allowed ones after it,
        replayed (an allowed commit that cannot be replayed without a held one is held too).
        The folder's main as it was is kept on a ref, and a record says what waits."""
        if self.router is None:
            return
        head = repo.head_sha()
        known = repo.resolve(TRACKING_REF)
        if head is None or (known is not None and contains(repo, known, head)):
            return  # nothing of the harness's that the forge lacks
        base = memfs_sync.status(repo, fetch=True).remote_head
        if base is None or contains(repo, base, head):
            return  # the forge has no main yet (the folder's first push makes it), or nothing new
        commits = guard.harness_commits(repo, head, base)
        routes = [self.router.route(repo, sha, parent, base) for sha, parent in commits]
        first = next((i for i, route in enumerate(routes) if not route.direct), None)
        if first is None:
            return
        start = commits[first][1]
        if start is None:
            return  # a first commit of all: nothing to hold it against
        tip = repo.git[start].peel(pygit2.Commit)
        held: list[tuple[str, str | None]] = []
        reasons: dict[str, None] = {}
        for (sha, parent), route in zip(commits[first:], routes[first:], strict=True):
            if route.direct:
                try:
                    tip = replay_commit(repo, repo.git[sha].peel(pygit2.Commit), tip)
                    continue
                except ReplayFailed:
                    reasons.setdefault("it builds on a commit held back for review", None)
            else:
                reasons.update(dict.fromkeys(route.reasons))
            held.append((sha, parent))
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        name = f"{stamp}-{head[:8]}"
        subjects = tuple(info.summary if (info := repo.commit_info(sha)) else "" for sha, _ in held)
        record = marker.Held(name, f"{HELD_PREFIX}{name}", tuple(held), subjects, tuple(reasons))
        with repo.lock():
            repo.git.references.create(record.ref, head, force=True)
            marker.write_held(marker.place(repo), record)
            repo.move_branch(str(tip.id), expected=head)
        self.say(FOLLOW_HELD.format(count=len(held), subjects=record.shown(), reasons="; ".join(reasons),
                                          ref=record.ref))

    def _propose_held(self, repo: MemoryRepo) -> None:
        """Open the pull request of each held record that has none yet, on the forge's main as
        this pass left it (the folder's main): its held commits replayed there, or, where they
        no longer apply, as they were made (the integrator resolves what conflicts)."""
        self._unproposed = False
        if self.router is None:
            return
        folder = marker.place(repo)
        records = [record for record in marker.held_records(folder) if record.number is None]
        if records and self.importer is not None and self._stamp != self._transcripts_stamp():
            self._import(time.monotonic())  # what the harness wrote of the turn, for the pull request to quote
        for record in records:
            if self._awaits_turns and not decide.propose_held_now(
                    max(self._commit_time(repo, sha) for sha, _ in record.commits),
                    self.router.turn_known(repo, record.commits), time.time()):
                continue  # the harness has not written the turn yet: a later pass opens it, quoting it
            base = repo.head_sha()
            assert base is not None
            tip = self._replayed(repo, record.commits, base)
            try:
                made = self.router.propose(repo, record.commits, base=base, tip=tip)
            except MemrepoError as exc:
                if str(exc) != record.problem:
                    self.say(FOLLOW_HELD_NOT_PROPOSED.format(subjects=record.shown(), ref=record.ref,
                                                                   problem=exc))
                marker.write_held(folder, replace(record, problem=str(exc)))
                self._unproposed = True
                continue
            marker.write_held(folder, replace(record, number=made.number, url=made.url, problem="",
                                              unnamed=not made.turn_named))
            self.say(FOLLOW_HELD_PROPOSED.format(number=made.number, url=made.url, subjects=record.shown(),
                                                       reasons="; ".join(record.reasons)))

    def _name_turns(self) -> None:
        """After an import: a held commit's pull request opened before its turn was written (a
        turn longer than TURN_GRACE, or `--once` before Letta wrote it) gets its description
        edited once to name that turn. Only records marked `unnamed` are looked at, and the
        forge is asked only once their turn is imported."""
        if self.router is None:
            return
        repo = MemoryRepo.open(self.root)
        folder = marker.place(repo)
        for record in marker.held_records(folder):
            if record.number is None or not record.unnamed:
                continue
            try:
                outcome = self.router.name_turn(repo, record.commits, record.number)
            except MemrepoError as exc:
                self._tell(FOLLOW_TURN_NOT_NAMED.format(number=record.number, problem=redact(str(exc))))
                continue
            if outcome == "waiting":
                continue
            marker.write_held(folder, replace(record, unnamed=False))
            if outcome == "named":
                self.say(FOLLOW_TURN_NAMED.format(number=record.number, url=record.url, subjects=record.shown()))

    @staticmethod
    def _commit_time(repo: MemoryRepo, sha: str) -> float:
        info = repo.commit_info(sha)
        return float(info.time) if info is not None else 0.0

    def _settle_held(self, repo: MemoryRepo) -> None:
        """Forget held records whose pull request was merged or closed (each poll): what was
        merged reaches the folder with the forge's main; what was closed was refused."""
        if self.router is None:
            return
        folder = marker.place(repo)
        for record in marker.held_records(folder):
            if record.number is None:
                continue
            try:
                state = self.router.pull_state(repo, record.number)
            except MemrepoError:
                continue
            if state == "open":
                continue
            marker.drop_held(folder, record)
            with contextlib.suppress(KeyError, pygit2.GitError):
                repo.git.references.delete(record.ref)
            self.say(FOLLOW_HELD_DONE.format(number=record.number, state=state, ref=record.ref))

    def _failed(self, reason: str, now: float) -> Outcome:
        self.state = decide.failed(self.state, now, random.random())
        self._tell(FOLLOW_FAILED.format(reason=reason))
        return "failed"

    def _transcripts_stamp(self) -> object:
        if self.importer is None:
            return None
        try:
            return self.importer.stamp()
        except OSError:  # the folder moving under the listing: the next tick looks again
            return self._stamp

    def _import(self, now: float) -> bool:
        """Import the harness's new transcript lines (see decide.import_due for when), and run
        the dreams they trigger; whether that worked. A failure is said once, and tried again
        at the next poll."""
        if self.importer is None:
            return True
        self._next_import = now + self.poll
        self._stamp = self._transcripts_stamp()
        try:
            lines = self.importer()
        except MemrepoError as exc:  # a bad line (nothing imported), the folder gone
            said = decide.say_once(self._import_said, str(exc))
            if said is not None:
                self.say(FOLLOW_IMPORT_FAILED.format(problem=said, seconds=self.poll))
            self._import_said = str(exc)
            return False
        self._import_said = None
        for line in lines:
            self.say(line)
        return True

    def _tell(self, notice: str) -> None:
        said = decide.say_once(self._said, notice)
        if said is not None:
            self.say(said)
        self._said = notice

    def _hook_notice(self) -> None:
        repo = MemoryRepo.open(self.root)
        hook = Path(repo.git.path) / "hooks" / "post-commit"
        try:
            installed = HOOK_KEY in hook.read_text(encoding="utf-8", errors="replace")
        except OSError:
            installed = False
        notice = decide.hook_notice(installed, repo.get_config(HOOK_KEY), self.url)
        if notice is not None:
            self.say(notice)
