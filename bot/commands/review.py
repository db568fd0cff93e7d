"""`memrepo review`: the open memory pull requests, worked from the terminal with the person's
own forge token (MEMREPO_REVIEW_TOKEN, GH_TOKEN or GITHUB_TOKEN; never the agent's token in the
remote URL). What a pull request is and what it waits for is decided in bot.review.queue; this
module asks the forge and says the answer. Refusals are one line; exit codes in REVIEW_EXIT_CODES."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from typing import Any, TypeVar

from bot.commands import texts
from bot.commands.actions import Run, actions
from bot.errors import MemrepoError
from bot.review import texts as say
from bot.texts import Text

REVIEW_LIST_HELP = "list the open memory pull requests: kind, who proposed it, conversation, what it waits for"
REVIEW_SHOW_HELP = "show a memory pull request: the user's words it rests on, its reviews and its diff"
REVIEW_MERGE_HELP = "merge a memory pull request yourself, where nothing waits or the policy lets its author merge"
LIST_ROW = "#{number:<5} {kind:<15} {who:<21} {conversation:<21} {waits}"
LIST_COUNT = Text("{count:|open memory pull request|open memory pull requests} in {repository}; "
                  "`memrepo review show N` shows one.")
SHOW_HEAD = "#{number} {title}\n{url}\n{kind}, proposed by {who}{conversation}; waits for {waits}."
SHOW_BRANCH = "{head} -> {base} at {sha}, opened by {author}"
SHOW_PROVENANCE_ABSENT = "No provenance block: nothing says which conversation this rests on."
SHOW_PROVENANCE_BAD = "The provenance block cannot be read: {problem}"
SHOW_SAID_HEADER = "What the user said (conversation {conversation} of agent {agent}{where}):"
SHOW_FILE = "  {status:<9} {path} (+{additions} -{deletions})"
APPROVED = "Approved #{number} at {sha}; the integrator merges it when nothing else waits."
NO_SUCH_PULL = "{repository} has no pull request #{number}"
NOT_MEMORY = ("#{number} in {repository} is not a memory pull request (no memrepo: label or branch): "
              "review it on the forge")
NOT_OPEN = "#{number} in {repository} is {state}: there is nothing left to review"
NO_PERMISSION = "the forge refused to {what} #{number} in {repository} with this token ({status}): {answer}"
NOT_A_WRITER = "{login} may not write to it"
FORGE_FAILED = "the forge could not {what} #{number} in {repository}: {problem}"
OWN_PULL = ("#{number} was opened with your own token, and the forge lets nobody approve their own pull "
            "request: give the agent an account of its own (`memrepo identity set --token-file FILE`), or "
            "allow its author to merge (`review: {{allow_author_merge: true}}` in .memrepo/config.yml) and run "
            "`memrepo review merge {number}`")
MERGE_WAITS = "#{number} cannot be merged yet: it waits for {waits}"
MERGE_REFUSED = "the forge did not merge #{number}: {detail}"
REASON_EMPTY = "--reason must say what is wrong: the agent and whoever reads the pull request later see it"
WHAT_READ = "read"
WHAT_APPROVE = "approve"
WHAT_REJECT = "request changes on"
WHAT_MERGE = "merge"

T = TypeVar("T")

EXIT_NO_TOKEN = 3
EXIT_NO_SUCH_PULL = 4
EXIT_NO_PERMISSION = 5
EXIT_WAITS = 6


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("review", help=texts.REVIEW_HELP, description=texts.REVIEW_DESCRIPTION,
                                   epilog=texts.REVIEW_EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    action = actions(parser, repo_help=texts.REPOSITORY_DIR_HELP, epilog=texts.REVIEW_EXIT_CODES,
                     formatter_class=argparse.RawDescriptionHelpFormatter)

    def on(name: str, help_text: str, func: Run) -> argparse.ArgumentParser:  # an action on pull request N
        p = action(name, help_text, func)
        p.add_argument("number", metavar="N", type=int, help=texts.REVIEW_NUMBER_HELP)
        return p

    action("list", REVIEW_LIST_HELP, run_list).add_argument("--json", action="store_true", help=texts.REVIEW_JSON_HELP)
    on("show", REVIEW_SHOW_HELP, run_show).add_argument(
        "--json", action="store_true", help=texts.REVIEW_JSON_HELP)
    on("approve", "approve a memory pull request at its current head (the integrator then merges it)", run_approve)
    on("reject", "request changes on a memory pull request with a reason, then close it", run_reject).add_argument(
        "--reason", metavar="TEXT", required=True, help=texts.REVIEW_REASON_HELP)
    on("merge", REVIEW_MERGE_HELP, run_merge)


# ------------------------------------------------------------------------------------ the forge
class Desk:
    """The person's forge client for the memory clone at `root`, and the refusals of its calls."""

    def __init__(self, root: str, environ: dict[str, str] | None = None) -> None:
        from bot import settings
        from bot.forge.client import ForgeClient
        from bot.forge.credentials import TokenCredentials
        from bot.forge.retry import RetryPolicy
        from bot.memfs import MemoryRepo
        from bot.memfs.sync import remote_url
        from bot.pullrequest.target import forge_target

        env = dict(os.environ if environ is None else environ)
        self.repo = MemoryRepo.open(root)
        target = forge_target(remote_url(self.repo), env)
        self.repository = target.repository
        token = settings.first_value(settings.REVIEW_TOKENS, env)
        if not token:
            raise MemrepoError(say.NO_TOKEN.format(repository=target.repository), exit_code=EXIT_NO_TOKEN)
        self.client = ForgeClient(target.repository, TokenCredentials(token), base_url=target.api_url,
                                  policy=RetryPolicy(max_total_seconds=20.0, max_attempts=3, backoff_base=0.2,
                                                     backoff_cap=2.0),
                                  timeout=20, min_write_interval=0.0)

    def ask(self, what: str, number: int, call: Callable[[], T]) -> T:
        """`call()`, its forge errors said in one line: not found (reading) -> no such pull
        request; refused credentials or permission -> EXIT_NO_PERMISSION."""
        from bot.forge.errors import Forbidden, ForgeError, NotFound, Unauthorized

        try:
            return call()
        except NotFound as exc:
            if what == WHAT_READ:
                raise MemrepoError(NO_SUCH_PULL.format(repository=self.repository, number=number),
                                   exit_code=EXIT_NO_SUCH_PULL) from None
            raise self._refused(what, number, exc) from None
        except (Unauthorized, Forbidden) as exc:
            raise self._refused(what, number, exc) from None
        except ForgeError as exc:
            raise MemrepoError(FORGE_FAILED.format(what=what, number=number, repository=self.repository,
                                                       problem=exc), exit_code=1) from None

    def _refused(self, what: str, number: int, exc: Any) -> MemrepoError:
        answer = " ".join(str(getattr(exc, "answer", "") or exc).split())[:200]
        return MemrepoError(NO_PERMISSION.format(what=what, number=number, repository=self.repository,
                                                     status=exc.status, answer=answer), exit_code=EXIT_NO_PERMISSION)

    def close(self) -> None:
        self.client.close()


def _provenance(body: str) -> tuple[Any, str | None]:
    from bot.pullrequest.provenance import ProvenanceError, parse_provenance

    try:
        return parse_provenance(body), None
    except ProvenanceError as exc:
        return None, str(exc)


def _entry(desk: Desk, pull: Any) -> dict[str, Any]:
    """One memory pull request as plain data: what it is, who proposed it, what it waits for."""
    from bot.contracts import STATUS_CONTEXT
    from bot.review import queue

    provenance, _ = _provenance(pull.body)
    status = desk.ask(WHAT_READ, pull.number, lambda: desk.client.combined_status(pull.head_sha))
    mine = next((s.state for s in status.statuses if s.context == STATUS_CONTEXT), None)
    reviews = desk.ask(WHAT_READ, pull.number, lambda: desk.client.list_reviews(pull.number))
    approved, requested = queue.review_outcome(
        [queue.Reviewed(r.author, r.state, r.commit_id or "") for r in reviews], pull.author, pull.head_sha)
    waits = queue.waits_for(queue.Waiting(draft=pull.draft, mergeable=pull.mergeable, labels=pull.labels,
                                          status=mine, approved=approved, changes_requested=requested))
    return {
        "number": pull.number, "title": pull.title, "url": pull.url,
        "kind": queue.kind_of(pull.head_ref, pull.labels, provenance),
        "proposed_by": queue.proposed_by(pull.author, provenance), "author": pull.author,
        "agent_id": provenance.agent_id if provenance else None,
        "conversation_id": provenance.conversation_id if provenance else None,
        "dream_id": provenance.dream_id if provenance else None,
        "waits_for": list(waits), "labels": list(pull.labels), "status": mine,
        "head_ref": pull.head_ref, "base_ref": pull.base_ref, "head_sha": pull.head_sha,
        "reviews": [{"reviewer": r.author, "state": r.state, "commit_id": r.commit_id} for r in reviews],
    }


def _memory_pull(desk: Desk, number: int, *, open_only: bool = True) -> Any:
    from bot.integrator.decide import is_memrepo_pull

    pull = desk.ask(WHAT_READ, number, lambda: desk.client.get_pull_request(number))
    if not is_memrepo_pull(pull.head_ref, pull.labels):
        raise MemrepoError(NOT_MEMORY.format(number=number, repository=desk.repository),
                           exit_code=EXIT_NO_SUCH_PULL)
    if open_only and pull.state != "open":
        state = "merged" if pull.merged else pull.state
        raise MemrepoError(NOT_OPEN.format(number=number, repository=desk.repository, state=state),
                           exit_code=EXIT_NO_SUCH_PULL)
    return pull


# ------------------------------------------------------------------------------------ actions
def pending(root: str, environ: dict[str, str] | None = None) -> tuple[str, list[dict[str, Any]]]:
    """(the forge repository, every open memory pull request of it) for the clone at `root`,
    as `review list` shows them."""
    from bot.integrator.decide import is_memrepo_pull

    desk = Desk(root, environ)
    try:
        pulls = desk.ask("list the pull requests of", 0, lambda: desk.client.list_open_pull_requests())
        memory = [p for p in pulls if is_memrepo_pull(p.head_ref, p.labels)]
        full = [desk.ask(WHAT_READ, p.number, lambda p=p: desk.client.get_pull_request(p.number)) for p in memory]
        return desk.repository, [_entry(desk, p) for p in sorted(full, key=lambda p: p.number)]
    finally:
        desk.close()


def run_list(args: argparse.Namespace) -> int:
    from bot.review import queue

    repository, entries = pending(args.repo)
    if args.json:
        print(json.dumps(entries, indent=2, ensure_ascii=False))
        return 0
    if not entries:
        print(f"No memory pull request waits in {repository}.")
        return 0
    print("#      kind            proposed by           conversation          waits for")
    for e in entries:
        print(LIST_ROW.format(number=e["number"], kind=e["kind"], who=e["proposed_by"],
                                  conversation=e["conversation_id"] or "-",
                                  waits=queue.waits_text(e["waits_for"])))
    print(LIST_COUNT.format(count=len(entries), repository=repository))
    return 0


def _said(desk: Desk, provenance: Any, body: str) -> dict[str, Any]:
    """The user's words the change rests on, as `memrepo why` finds them: the transcript here,
    else what the pull request's description quotes."""
    from bot.provenance import evidence
    from bot.provenance.sources import Sources
    from bot.provenance.why import transcript_behind

    dream = evidence.dream_from_provenance(provenance, "")
    sources = Sources(desk.repo, False, None)
    try:
        told = transcript_behind(dream, sources, {"number": 0, "body": body})
    finally:
        sources.close()
    if not provenance.is_dream:
        told["messages"] = evidence.said_by_the_user(told["messages"])
    return told


def run_show(args: argparse.Namespace) -> int:
    from bot.review import queue

    desk = Desk(args.repo)
    try:
        pull = _memory_pull(desk, args.number, open_only=False)
        entry = _entry(desk, pull)
        files = desk.ask(WHAT_READ, args.number, lambda: desk.client.pull_files(args.number))
        provenance, problem = _provenance(pull.body)
        said = _said(desk, provenance, pull.body) if provenance is not None else None
    finally:
        desk.close()
    entry["files"] = [{"path": f.path, "status": f.status, "additions": f.additions, "deletions": f.deletions,
                       "patch": f.patch} for f in files]
    entry["provenance"] = provenance.as_data() if provenance is not None else None
    entry["provenance_problem"] = problem
    entry["said"] = said
    if args.json:
        print(json.dumps(entry, indent=2, ensure_ascii=False))
        return 0
    conversation = " in conversation {conversation}".format(conversation=entry["conversation_id"]) \
        if entry["conversation_id"] else ""
    print(SHOW_HEAD.format(number=pull.number, title=pull.title, url=pull.url, kind=entry["kind"],
                               who=entry["proposed_by"], conversation=conversation,
                               waits=queue.waits_text(entry["waits_for"])))
    print(SHOW_BRANCH.format(head=pull.head_ref, base=pull.base_ref, sha=pull.head_sha[:12], author=pull.author))
    reviews = ", ".join(f"{r['reviewer']} {r['state'].lower()}" for r in entry["reviews"])
    print(f"reviews: {reviews}" if reviews else "reviews: none")
    print()
    if provenance is None:
        print(SHOW_PROVENANCE_BAD.format(problem=problem) if problem else SHOW_PROVENANCE_ABSENT)
    elif said is not None and said["messages"]:
        where = ", as the pull request quotes it" if said.get("quoted_from") is not None else ""
        print(SHOW_SAID_HEADER.format(conversation=said["conversation_id"], agent=said["agent_id"], where=where))
        for m in said["messages"]:
            text = " ".join(str(m.get("text") or "").split())
            print("  {message_id} ({kind}, {at}): {text}".format(message_id=m.get("message_id"), kind=m.get("kind"),
                                            at=m.get("captured_at"), text=text))
    else:
        print("The user's words are not available here: {reason}".format(reason=(said or {}).get("reason")))
    print()
    print(f"Files ({len(files)}):")
    for f in files:
        print(SHOW_FILE.format(status=f.status, path=f.path, additions=f.additions, deletions=f.deletions))
    for f in files:
        print()
        print(f"--- {f.path}")  # not said: a diff's header
        print(f.patch.rstrip("\n") if f.patch else "  (no text diff: binary or too large)")
    return 0


def _own(desk: Desk, pull: Any, what: str) -> bool:
    """Whether the person opened `pull` themselves; first, a refusal (EXIT_NO_PERMISSION) when the
    forge does not let them write, so nothing is half done (a review sent, the close refused)."""
    from bot.integrator.decide import may_write

    me = desk.ask(what, pull.number, desk.client.own_login)
    permission = desk.ask(what, pull.number, lambda: desk.client.permission(me))
    if not may_write(permission):
        raise MemrepoError(NO_PERMISSION.format(what=what, number=pull.number, repository=desk.repository,
                                                    status=permission, answer=NOT_A_WRITER.format(login=me)),
                           exit_code=EXIT_NO_PERMISSION)
    return bool(me) and me.casefold() == pull.author.casefold()


def run_approve(args: argparse.Namespace) -> int:
    desk = Desk(args.repo)
    try:
        pull = _memory_pull(desk, args.number)
        if _own(desk, pull, WHAT_APPROVE):
            raise MemrepoError(OWN_PULL.format(number=pull.number), exit_code=EXIT_NO_PERMISSION)
        desk.ask(WHAT_APPROVE, pull.number,
                 lambda: desk.client.submit_review(pull.number, "APPROVE", "", pull.head_sha))
    finally:
        desk.close()
    print(APPROVED.format(number=pull.number, sha=pull.head_sha[:12]))
    return 0


def run_reject(args: argparse.Namespace) -> int:
    reason = " ".join(args.reason.split())
    if not reason:
        raise MemrepoError(REASON_EMPTY, exit_code=2)
    desk = Desk(args.repo)
    try:
        pull = _memory_pull(desk, args.number)
        # The forge lets nobody request changes on their own pull request: there the reason is a comment.
        event = "COMMENT" if _own(desk, pull, WHAT_REJECT) else "REQUEST_CHANGES"
        desk.ask(WHAT_REJECT, pull.number,
                 lambda: desk.client.submit_review(pull.number, event, reason, pull.head_sha))
        desk.ask("close", pull.number, lambda: desk.client.close_pull_request(pull.number))
    finally:
        desk.close()
    print(f"Requested changes on #{pull.number} and closed it: {reason}")
    return 0


def _policy_at(desk: Desk, pull: Any) -> Any:
    """The policy at the tip of the pull request's base branch, as the integrator reads it; the
    defaults where the base has none, and where it cannot be read (the defaults let no author
    merge)."""
    from bot.config import CONFIG_PATH, DEFAULT_POLICY, PolicyError, parse_policy
    from bot.forge.errors import NotFound

    def read() -> str | None:
        try:
            return desk.client.read_file(CONFIG_PATH, pull.base_ref or "main").text
        except NotFound:  # the base has no config
            return None

    text = desk.ask(WHAT_READ, pull.number, read)
    if text is None:
        return DEFAULT_POLICY
    try:
        return parse_policy(text)
    except PolicyError:
        return DEFAULT_POLICY


def run_merge(args: argparse.Namespace) -> int:
    from bot.review import queue

    desk = Desk(args.repo)
    try:
        pull = _memory_pull(desk, args.number)
        own = _own(desk, pull, WHAT_MERGE)
        entry = _entry(desk, pull)
        policy = _policy_at(desk, pull)
        still = queue.merge_refusal(entry["waits_for"], own_pull=own,
                                    allow_author_merge=policy.review.allow_author_merge)
        if still:
            raise MemrepoError(MERGE_WAITS.format(number=pull.number, waits=queue.waits_text(still)),
                               exit_code=EXIT_WAITS)
        result = desk.ask(WHAT_MERGE, pull.number, lambda: desk.client.merge(pull.number, pull.head_sha))
    finally:
        desk.close()
    if not result.merged:
        raise MemrepoError(MERGE_REFUSED.format(number=pull.number, detail=result.detail), exit_code=EXIT_WAITS)
    print("Merged #{number} as {sha}.".format(number=pull.number, sha=(result.sha or "")[:12]))
    return 0
