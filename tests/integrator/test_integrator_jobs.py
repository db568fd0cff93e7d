"""The integrator's jobs against real parts: localhub over HTTP and git, a real Redis server,
memory repositories made by `memrepo init`. Jobs run in this process with an injected
context (and once through a real rq worker): a valid dream is validated, merged and announced;
an invalid one is never merged; conflicts are resolved (explicit) or closed (auto); review
mode and protected paths wait for a person's approval."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import github
import pytest
import redis as redis_lib
import requests

from bot.contracts import (
    LABEL_AGENT_EDIT,
    LABEL_CONFLICT,
    LABEL_DREAM,
    LABEL_NEEDS_REVIEW,
    LABEL_UNTRUSTED,
    STATUS_CONTEXT,
)
from bot.forge.client import ForgeClient
from bot.forge.credentials import TokenCredentials
from bot.forge.shapes import NewPullRequest, PullRequest
from bot.identity import INTEGRATOR
from bot.integrator import jobs
from bot.integrator.context import Context, Remote, using
from bot.integrator.state import Tuning
from bot.memfs import sync
from bot.memfs.create import init_repository
from bot.notify.events import HeadEvent
from bot.notify.publisher import Subscription, last_head
from bot.queue import QUEUE, Settled, enqueue_integrate, get_queue, job_key
from localhub.server import LocalhubServer
from tests.conftest import arm_fault, fault_hits, git, localhub_token
from tests.memory_forge import FAST, REPO, dream_body

FACTS = "reference/facts.md"
FACTS_TEXT = "---\ndescription: Facts about the person.\n---\n# Facts\n\n- lives in Berlin\n- likes tea\n"
MAIL = "external:mailto:pat.person@example.net"


def doc(description: str, body: str) -> str:
    return f"---\ndescription: {description}\n---\n{body}"


@dataclass
class World:
    """alice/memory on localhub (made by `memrepo init`, pushed), a plain clone to make
    branches from (no hooks: tests push invalid memory on purpose), Redis, and the context
    the integrator's jobs run with."""

    server: LocalhubServer
    token: str
    clone: Path
    redis: redis_lib.Redis
    ctx: Context
    tmp: Path
    dreams: int = 0

    def client(self, token: str | None = None) -> ForgeClient:
        return ForgeClient(REPO, TokenCredentials(token or self.token), base_url=self.server.api_url, policy=FAST,
                           min_write_interval=0.0, timeout=10)

    # ------------------------------------------------------------------ git
    def commit(self, branch: str, files: dict[str, str | None], base: str = "main", message: str = "",
               author: str = "") -> str:
        """A commit on `branch` (from origin's `base`) writing `files` (None deletes), pushed;
        `author` is the writer's address (a dream's or an agent's, as memrepo writes them)."""
        git(self.clone, "fetch", "-q", "origin")
        git(self.clone, "checkout", "-q", "-B", branch, f"origin/{base}")
        for name, text in files.items():
            path = self.clone / name
            if text is None:
                git(self.clone, "rm", "-q", name)
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        git(self.clone, "add", "-A")
        who = ["-c", f"user.email={author}", "-c", "user.name=memrepo writer"] if author else []
        git(self.clone, *who, "commit", "-qm", message or f"{branch}: edit {', '.join(files)}")
        git(self.clone, "push", "-q", "origin", f"HEAD:refs/heads/{branch}")
        return git(self.clone, "rev-parse", "HEAD").strip()

    def main_sha(self) -> str:
        git(self.clone, "fetch", "-q", "origin")
        return git(self.clone, "rev-parse", "origin/main").strip()

    def main_file(self, path: str) -> str:
        git(self.clone, "fetch", "-q", "origin")
        return git(self.clone, "show", f"origin/main:{path}")

    def merges_on_main(self) -> int:
        """Pull requests merged into main: merge commits on its first-parent line (a conflict
        resolution is a merge commit too, but on the pull request's branch)."""
        git(self.clone, "fetch", "-q", "origin")
        return int(git(self.clone, "rev-list", "--count", "--merges", "--first-parent", "origin/main").strip())

    def set_policy(self, **changes: Any) -> None:
        """Edit .memrepo/config.yml on main (a person's push)."""
        git(self.clone, "fetch", "-q", "origin")
        text = git(self.clone, "show", "origin/main:.memrepo/config.yml")
        lines = []
        for line in text.splitlines():
            key = line.split(":", 1)[0]
            if key in changes and not line.startswith(" "):
                value = changes[key]
                line = f"{key}: {json.dumps(value) if not isinstance(value, str) else value}"
            lines.append(line)
        self.commit("main", {".memrepo/config.yml": "\n".join(lines) + "\n"})

    # ------------------------------------------------------------------ pull requests
    def open_dream(self, files: dict[str, str | None], base: str = "main") -> tuple[int, str, str]:
        """A dream pull request as the dreamer opens it: (number, head sha, dream id)."""
        self.dreams += 1
        dream_id = f"20260314T0900{self.dreams:02d}Z-{self.dreams:08x}"
        branch = f"memrepo/dream/{dream_id}"
        base_sha = self.main_sha()
        sha = self.commit(branch, files, base, message=f"Dream {dream_id}\n\nDream-ID: {dream_id}\nAgent-ID: a1\n",
                          author=f"{dream_id}@dreams.memrepo")
        pr = self.client().open_pull_request(NewPullRequest(
            head=branch, base="main", title=f"Dream {dream_id}", body=dream_body(dream_id, base_sha, next(iter(files))),
            labels=(LABEL_DREAM,)))
        return pr.number, sha, dream_id

    def open_edit(self, files: dict[str, str | None], name: str = "x1") -> tuple[int, str]:
        branch = f"memrepo/edit/a1/{name}"
        sha = self.commit(branch, files, author="a1@agents.memrepo")
        pr = self.client().open_pull_request(NewPullRequest(head=branch, base="main", title=f"Agent edit {name}",
                                                            labels=(LABEL_AGENT_EDIT,)))
        return pr.number, sha

    def open_untrusted_edit(self, files: dict[str, str | None], name: str = "u1") -> tuple[int, str]:
        """An agent's edit made in a turn that read an e-mail, as its commit says (a `Source`
        trailer), opened with no labels at all: what the integrator sees between the opening
        and the labelling, or after someone removed the labels."""
        branch = f"memrepo/edit/a1/{name}"
        message = (f"Address changed (per e-mail)\n\nAgent-ID: a1\nConversation-ID: c1\n"
                   f"Base-Commit: {self.main_sha()}\nSource: {MAIL}\n")
        sha = self.commit(branch, files, message=message, author="a1@agents.memrepo")
        pr = self.client().open_pull_request(NewPullRequest(head=branch, base="main", title=f"Agent edit {name}"))
        assert pr.labels == ()
        return pr.number, sha

    def pull(self, number: int) -> PullRequest:
        return self.client().get_pull_request(number)

    def status(self, sha: str) -> tuple[str | None, str | None]:
        combined = self.client().combined_status(sha)
        found = next((s for s in combined.statuses if s.context == STATUS_CONTEXT), None)
        return (found.state, found.description) if found else (None, None)

    def comments(self, number: int) -> list[str]:
        resp = requests.get(f"{self.server.api_url}/repos/{REPO}/issues/{number}/comments",
                            headers={"Authorization": f"token {self.token}"}, timeout=10)
        resp.raise_for_status()
        return [c["body"] for c in resp.json()]

    def approve(self, number: int, login: str = "bob") -> None:
        gh = github.Github(auth=github.Auth.Token(localhub_token(self.server, login)), base_url=self.server.api_url,
                           retry=None)
        gh.get_repo(REPO).get_pull(number).create_review(body="Looks right.", event="APPROVE")

    def integrate(self, number: int) -> str:
        return jobs.integrate(REPO, number, context=self.ctx)

    def arm(self, **spec: Any) -> int:
        return arm_fault(self.server, **spec)

    def hits(self, fault_id: int) -> int:
        return fault_hits(self.server, fault_id)

    def subscribe(self) -> Subscription:
        return Subscription(self.redis, REPO)


def drain(subscription: Subscription, wait: float = 0.5) -> list[HeadEvent]:
    events = []
    while True:
        event = subscription.get(timeout=wait)
        if event is None:
            return events
        events.append(event)


def make_context(server: LocalhubServer, token: str, redis_url: str, work_dir: Path, **kw: Any) -> Context:
    kw.setdefault("tuning", Tuning(max_attempts=12, wait_base=0.05, wait_cap=0.5))
    kw.setdefault("lock_ttl", 30.0)
    kw.setdefault("inline_wait", 5.0)

    def forge(repo: str) -> ForgeClient:
        return ForgeClient(repo, TokenCredentials(token), base_url=server.api_url, policy=FAST,
                           min_write_interval=0.0, timeout=10)

    def remote(repo: str) -> Remote:
        return Remote(f"{server.url}/{repo}.git", lambda: token)

    return Context(redis=redis_lib.Redis.from_url(redis_url), forge=forge, remote=remote, work_dir=work_dir, **kw)


@contextmanager
def built_world(localhub: LocalhubServer, tmp_path: Path, redis_url: str) -> Iterator[World]:
    """The world of these tests (the fault tests build theirs with it too)."""
    token = localhub_token(localhub, "alice")
    repo = github.Github(auth=github.Auth.Token(token), base_url=localhub.api_url, retry=None
                         ).get_user().create_repo("memory")
    localhub_token(localhub, "bob")
    repo.add_to_collaborators("bob", "push")  # the teammate who reviews
    memory = init_repository(tmp_path / "memory", "a1", "Ada")
    url = localhub.url.replace("http://", f"http://x-access-token:{token}@") + f"/{REPO}.git"
    sync.set_remote(memory, url)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", url, str(clone))
    ctx = make_context(localhub, token, redis_url, tmp_path / "work")
    w = World(localhub, token, clone, ctx.redis, ctx, tmp_path)
    w.commit("main", {FACTS: FACTS_TEXT})
    try:
        with using(ctx):
            yield w
    finally:
        ctx.redis.close()


@pytest.fixture
def world(localhub: LocalhubServer, tmp_path: Path, redis_url: str) -> Iterator[World]:
    with built_world(localhub, tmp_path, redis_url) as w:
        yield w


# ------------------------------------------------------------------------------ the main flows
def test_a_valid_dream_is_validated_merged_and_announced(world: World) -> None:
    before = world.main_sha()
    number, head, dream_id = world.open_dream({FACTS: FACTS_TEXT + "- has a cat called Mo\n"})
    with world.subscribe() as sub:
        summary = world.integrate(number)
        events = drain(sub)
    pull = world.pull(number)
    assert pull.merged, summary
    assert isinstance(summary, Settled)  # events that arrived meanwhile need no second run
    assert world.status(head) == ("success", "memory is valid")
    assert world.merges_on_main() == 1
    assert "- has a cat called Mo" in world.main_file(FACTS)
    assert len(events) == 1
    event = events[0]
    assert (event.repo, event.sha, event.before, event.cause, event.pr, event.dream_id) == (
        REPO, pull.merge_commit_sha, before, "merge", number, dream_id)
    assert last_head(world.redis, REPO) == event
    # Running it again does nothing more: no second merge, no second event.
    with world.subscribe() as sub:
        assert isinstance(world.integrate(number), Settled)
        assert drain(sub, 0.2) == []
    assert world.merges_on_main() == 1


def test_an_invalid_dream_fails_is_explained_and_closed(world: World) -> None:
    number, head, _ = world.open_dream({"system/notes.md": "No frontmatter here.\n"})
    with world.subscribe() as sub:
        world.integrate(number)
        assert drain(sub, 0.2) == []
    pull = world.pull(number)
    assert (pull.state, pull.merged) == ("closed", False)
    state, description = world.status(head)
    assert state == "failure" and description and description.startswith("1 problem: system/notes.md")
    [comment] = world.comments(number)
    assert "does not validate" in comment and "system/notes.md" in comment and "closed" in comment
    assert world.merges_on_main() == 0


def test_an_invalid_agent_edit_fails_and_stays_open_for_a_person(world: World) -> None:
    number, head = world.open_edit({"system/notes.md": "No frontmatter here.\n"})
    world.integrate(number)
    pull = world.pull(number)
    assert (pull.state, pull.merged) == ("open", False)
    assert world.status(head)[0] == "failure"
    assert len(world.comments(number)) == 1
    world.integrate(number)  # an event later: nothing new is said
    assert len(world.comments(number)) == 1
    # A person pushes a fix: validated again. The branch no longer holds only the agent's
    # commits, so it is a person's change now: merged once someone else approves it.
    fixed = world.commit("memrepo/edit/a1/x1", {"system/notes.md": doc("Notes.", "Fixed.\n")},
                         base="memrepo/edit/a1/x1")
    world.integrate(number)
    assert not world.pull(number).merged
    assert world.status(fixed) == ("pending", "waiting for review")
    world.approve(number, "bob")
    world.integrate(number)
    assert world.pull(number).merged
    assert world.status(fixed)[0] == "success"
    assert world.merges_on_main() == 1


def test_a_conflict_in_explicit_mode_is_resolved_validated_and_merged(world: World) -> None:
    number, head, _ = world.open_dream({FACTS: FACTS_TEXT + "- has a cat called Mo\n"})
    world.commit("main", {FACTS: FACTS_TEXT + "- works as a nurse\n"})  # main moved meanwhile, same place
    world.integrate(number)
    pull = world.pull(number)
    assert pull.merged
    facts = world.main_file(FACTS)
    assert "- has a cat called Mo" in facts and "- works as a nurse" in facts
    assert facts.count("- lives in Berlin") == 1
    # The resolution is a merge commit by the integrator on the branch, with both parents.
    resolution = pull.head_sha
    assert resolution != head
    parents = git(world.clone, "rev-list", "--parents", "-n", "1", resolution).split()[1:]
    assert parents[0] == head and len(parents) == 2
    author = git(world.clone, "log", "-1", "--format=%an <%ae>", resolution).strip()
    assert author == f"{INTEGRATOR.name} <{INTEGRATOR.email}>"
    assert world.status(resolution)[0] == "success"
    assert world.merges_on_main() == 1
    # The pull request says what conflicted, how it was resolved and what a person can do.
    [comment] = world.comments(number)
    assert comment.startswith("**memrepo resolved the conflicts between this branch and `main`**")
    assert f"pushed the resolution as {resolution[:12]}" in comment
    assert f"both sides changed 1 file:\n\n- `{FACTS}`" in comment
    assert "**How.** A markdown-aware three-way merge" in comment and "validated before it was pushed" in comment
    assert "**What you can do.**" in comment and "revert the merge" in comment  # explicit: no review stands
    world.integrate(number)
    assert len(world.comments(number)) == 1  # said once


def test_an_unresolvable_conflict_is_labelled_and_left_for_a_person(world: World) -> None:
    world.commit("main", {"reference/city.md": doc("Where they live.", "Lives somewhere.\n")})
    number, _, _ = world.open_dream({"reference/city.md": doc("Where they live.", "Lives in Berlin.\n")})
    world.commit("main", {"reference/city.md": doc("Where they live.", "Lives in Hamburg.\n")})
    world.integrate(number)
    pull = world.pull(number)
    assert (pull.state, pull.merged) == ("open", False)
    assert LABEL_CONFLICT in pull.labels
    [comment] = world.comments(number)
    assert "could not resolve" in comment and "reference/city.md" in comment
    world.integrate(number)
    assert len(world.comments(number)) == 1
    assert world.merges_on_main() == 0


def test_a_conflict_in_auto_mode_closes_the_dream_with_a_comment(world: World) -> None:
    world.set_policy(merge="auto")
    number, _, _ = world.open_dream({FACTS: FACTS_TEXT + "- has a cat called Mo\n"})
    world.commit("main", {FACTS: FACTS_TEXT + "- works as a nurse\n"})
    world.integrate(number)
    pull = world.pull(number)
    assert (pull.state, pull.merged) == ("closed", False)
    [comment] = world.comments(number)
    assert "conflicts with `main`" in comment and "`auto`" in comment
    assert "What you can do: nothing" in comment and "`merge: explicit`" in comment
    assert comment.rstrip().endswith(f"Files both this branch and `main` changed:\n\n- `{FACTS}`")
    assert world.merges_on_main() == 0


def test_review_mode_waits_for_an_approval_by_someone_else_then_merges(world: World) -> None:
    world.set_policy(merge="review")
    number, head, _ = world.open_dream({FACTS: FACTS_TEXT + "- has a cat called Mo\n"})
    world.integrate(number)
    pull = world.pull(number)
    assert (pull.state, pull.merged) == ("open", False)
    assert LABEL_NEEDS_REVIEW in pull.labels
    assert world.status(head) == ("pending", "waiting for review")
    world.integrate(number)  # nothing changed: still waiting
    assert not world.pull(number).merged
    world.approve(number, "bob")
    world.integrate(number)
    pull = world.pull(number)
    assert pull.merged
    assert LABEL_NEEDS_REVIEW not in pull.labels
    assert world.status(head)[0] == "success"
    assert world.merges_on_main() == 1


def test_only_a_writer_who_wrote_none_of_its_commits_can_approve(world: World) -> None:
    """An outsider's approval and an approval by the author of a commit on the pull request
    count for nothing; a writer who wrote none of it approves it."""
    world.set_policy(merge="review")
    number, _ = world.open_edit({FACTS: FACTS_TEXT + "- has a cat called Mo\n"})
    head = world.commit("memrepo/edit/a1/x1", {FACTS: FACTS_TEXT + "- has a cat called Mo, a tabby\n"},
                        base="memrepo/edit/a1/x1", author="bob@users.noreply.github.com")
    world.approve(number, "eve")  # no access at all
    world.approve(number, "bob")  # may write, but wrote a commit of it
    world.integrate(number)
    pull = world.pull(number)
    assert (pull.head_sha, pull.merged) == (head, False)
    assert world.status(head) == ("pending", "waiting for review")
    localhub_token(world.server, "carol")
    github.Github(auth=github.Auth.Token(world.token), base_url=world.server.api_url, retry=None
                  ).get_repo(REPO).add_to_collaborators("carol", "push")
    world.approve(number, "carol")
    world.integrate(number)
    assert world.pull(number).merged


def test_a_protected_path_needs_a_review_even_in_auto_mode(world: World) -> None:
    world.set_policy(merge="auto")
    number, _, _ = world.open_dream({"system/persona.md": doc("Who I am.", "I am Ada, careful and kind.\n")})
    world.integrate(number)
    pull = world.pull(number)
    assert not pull.merged and LABEL_NEEDS_REVIEW in pull.labels
    world.approve(number, "bob")
    world.integrate(number)
    assert world.pull(number).merged


def test_an_unlabelled_edit_whose_commit_names_an_external_source_waits_for_a_person(world: World) -> None:
    world.set_policy(merge="auto")  # the most permissive mode: the commits alone must hold it
    number, head = world.open_untrusted_edit({FACTS: FACTS_TEXT + "- lives at 9 Harbour Road, Leith\n"})
    assert git(world.clone, "interpret-trailers", "--parse", input_text(world, head)).strip().endswith(
        f"Source: {MAIL}")
    world.integrate(number)
    pull = world.pull(number)
    assert (pull.state, pull.merged) == ("open", False)
    assert set(pull.labels) == {LABEL_NEEDS_REVIEW, LABEL_UNTRUSTED}
    assert world.status(head) == ("pending", "waiting for review")
    [comment] = world.comments(number)
    assert f"`{MAIL}`" in comment and "approval" in comment
    world.integrate(number)  # nothing changed: still waiting, nothing said twice
    assert not world.pull(number).merged and len(world.comments(number)) == 1
    # removing the label removes nothing: it comes back, and the pull request still waits
    assert world.client().remove_label(number, LABEL_UNTRUSTED)
    world.integrate(number)
    pull = world.pull(number)
    assert not pull.merged and LABEL_UNTRUSTED in pull.labels
    # a person's approval of this head lets it through
    world.approve(number, "bob")
    world.integrate(number)
    pull = world.pull(number)
    assert pull.merged
    assert world.merges_on_main() == 1
    assert "9 Harbour Road" in world.main_file(FACTS)


def test_a_resolution_keeps_the_sources_of_the_commits_it_merges(world: World) -> None:
    number, head = world.open_untrusted_edit({FACTS: FACTS_TEXT + "- lives at 9 Harbour Road, Leith\n"})
    world.commit("main", {FACTS: FACTS_TEXT + "- works as a nurse\n"})  # main moved meanwhile, same place
    world.integrate(number)
    pull = world.pull(number)
    assert (pull.state, pull.merged) == ("open", False)
    resolution = pull.head_sha
    assert resolution != head  # resolved by the integrator, which names no source of its own
    git(world.clone, "fetch", "-q", "origin", pull.head_ref)
    author = git(world.clone, "log", "-1", "--format=%ae", resolution).strip()
    assert author == INTEGRATOR.email
    assert "Source:" not in git(world.clone, "log", "-1", "--format=%B", resolution)
    assert set(pull.labels) >= {LABEL_NEEDS_REVIEW, LABEL_UNTRUSTED}
    assert world.status(resolution) == ("pending", "waiting for review")
    resolved = [c for c in world.comments(number) if c.startswith("**memrepo resolved the conflicts")]
    assert len(resolved) == 1 and "approves this new head" in resolved[0] and "approve it" in resolved[0]
    world.approve(number, "bob")
    world.integrate(number)
    assert world.pull(number).merged
    facts = world.main_file(FACTS)
    assert "9 Harbour Road" in facts and "works as a nurse" in facts


def input_text(world: World, sha: str) -> str:
    """A file holding the commit's message, for `git interpret-trailers`."""
    path = world.tmp / f"message-{sha[:12]}.txt"
    path.write_text(git(world.clone, "log", "-1", "--format=%B", sha))
    return str(path)


def test_a_pull_request_memrepo_did_not_open_is_left_alone(world: World) -> None:
    world.commit("feature", {"reference/x.md": doc("X.", "x\n")})
    pr = world.client().open_pull_request(NewPullRequest(head="feature", base="main", title="A person's change"))
    world.integrate(pr.number)
    assert world.pull(pr.number).state == "open" and not world.pull(pr.number).merged
    assert world.status(pr.head_sha) == (None, None)


# ------------------------------------------------------------------------------ through rq
def test_a_real_rq_worker_runs_the_job_and_the_pull_request_is_merged(world: World) -> None:
    from bot.queue import Worker

    number, _, dream_id = world.open_dream({FACTS: FACTS_TEXT + "- has a cat called Mo\n"})
    assert enqueue_integrate(world.redis, REPO, number).outcome == "queued"
    assert enqueue_integrate(world.redis, REPO, number).outcome == "pending"  # a burst collapses
    with world.subscribe() as sub:
        Worker([QUEUE], connection=world.redis).work(burst=True)
        events = drain(sub)
    assert world.pull(number).merged
    assert [(e.cause, e.pr, e.dream_id) for e in events] == [("merge", number, dream_id)]
    job = get_queue(world.redis).fetch_job(job_key(REPO, number))
    assert job is not None and job.get_status() == "finished"
    assert world.merges_on_main() == 1


def test_integrate_commit_and_reconcile_enqueue_only_memrepo_pull_requests(world: World) -> None:
    number, head, _ = world.open_dream({FACTS: FACTS_TEXT + "- has a cat called Mo\n"})
    world.commit("feature", {"reference/x.md": doc("X.", "x\n")})
    world.client().open_pull_request(NewPullRequest(head="feature", base="main", title="A person's change"))
    assert jobs.integrate_commit(REPO, head, context=world.ctx) == [number]
    queue = get_queue(world.redis)
    assert queue.job_ids == [job_key(REPO, number)]
    assert jobs.reconcile(REPO, context=world.ctx) == []  # already waiting: nothing added
    queue.empty()
    assert jobs.reconcile(REPO, context=world.ctx) == [number]
    assert jobs.known_repos(world.redis) == [REPO]


def test_a_long_wait_is_scheduled_with_rqs_scheduler(world: World) -> None:
    jobs.schedule_wake(world.redis, REPO, 7, 30.0)
    from rq.registry import ScheduledJobRegistry

    registry = ScheduledJobRegistry(queue=get_queue(world.redis))
    assert registry.get_job_ids() == [jobs.wake_job_id(REPO, 7)]


def test_a_job_for_a_pull_request_closed_meanwhile_does_nothing(world: World) -> None:
    """Out of order: a synchronize delivery handled after the pull request was closed."""
    number, head, _ = world.open_dream({FACTS: FACTS_TEXT + "- has a dog called Bo\n"})
    world.client().close_pull_request(number)
    with world.subscribe() as sub:
        world.integrate(number)
        assert drain(sub, 0.2) == []
    pull = world.pull(number)
    assert (pull.state, pull.merged) == ("closed", False)
    assert world.merges_on_main() == 0
    assert world.status(head) == (None, None)
    assert world.comments(number) == []


def test_a_job_for_a_pull_request_whose_branch_was_deleted_does_nothing(world: World) -> None:
    number, _, _ = world.open_dream({FACTS: FACTS_TEXT + "- likes rain\n"})
    branch = world.pull(number).head_ref.removeprefix("refs/heads/")
    gone = requests.delete(f"{world.server.api_url}/repos/{REPO}/git/refs/heads/{branch}", timeout=10,
                           headers={"Authorization": f"token {world.token}"})
    assert gone.status_code == 204
    world.integrate(number)
    pull = world.pull(number)
    assert pull.merged is False
    assert world.merges_on_main() == 0
