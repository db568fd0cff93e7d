"""`memrepo repository`: connect memory to a remote (GitHub, a bare repository, any git URL)
and sync it. The agent's memory tool pushes after every commit by itself; these commands are
for the person who sets things up or wants to see where the clone stands."""

from __future__ import annotations

import argparse
import json

from bot.commands import texts
from bot.commands.actions import actions
from bot.errors import MemrepoError
from bot.memfs import texts as memfs_texts

REPOSITORY_STATUS_HELP = "show the remote, unpushed and unpulled commits, last sync, backups and the follower"
GUARD_INSTALLED = ("pre-push guard installed ({hook}): a push of main that would add a commit the policy keeps for "
                   "review is refused, and memrepo follow opens its pull request")
# `repository status --fetch` and `/doctor`.
WAITING_LABEL = "pull requests"
ACCOUNTS_LABEL = "accounts"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("repository", help=texts.REPOSITORY_HELP,
                                   description=texts.REPOSITORY_HELP)
    action = actions(parser, repo_help=texts.REPOSITORY_DIR_HELP)

    set_parser = action("set", "connect to a remote (GitHub URL, path of a bare repository, any git URL)", run_set)
    set_parser.add_argument("url", metavar="URL", help=texts.REPOSITORY_URL_HELP)
    status_parser = action("status", REPOSITORY_STATUS_HELP, run_status)
    status_parser.add_argument("--fetch", action="store_true", help=texts.REPOSITORY_FETCH_HELP)
    status_parser.add_argument("--json", action="store_true", help=texts.REPOSITORY_STATUS_JSON_HELP)
    action("unset", "disconnect from the remote (local history is kept)", run_unset)
    action("sync", "fetch, fast-forward or replay local commits, then push", run_sync)


def run_set(args: argparse.Namespace) -> int:
    import sys

    from bot.follow import guard
    from bot.follow import texts as follow_texts
    from bot.memfs import MemoryRepo, sync

    repo = MemoryRepo.open(args.repo)
    print(sync.set_remote(repo, args.url))
    installed = guard.install(repo, sys.executable)  # once connected: a push of main obeys the policy from now on
    if installed.chained is not None:
        print(follow_texts.GUARD_CHAINED.format(chained=installed.chained, hook=installed.hook))
    elif installed.written:
        print(GUARD_INSTALLED.format(hook=installed.hook))
    return 0


def run_unset(args: argparse.Namespace) -> int:
    from bot.memfs import MemoryRepo, sync

    print(sync.unset_remote(MemoryRepo.open(args.repo)))
    return 0


def run_sync(args: argparse.Namespace) -> int:
    from bot.memfs import MemoryRepo, sync
    from bot.memfs import shared_projection as shared

    repo = MemoryRepo.open(args.repo)
    result = sync.sync(repo)
    if not result.pushed:
        raise MemrepoError(memfs_texts.SYNC_FAILED.format(reason=result.summary))
    if result.set_aside:
        raise MemrepoError(result.summary)
    print(result.summary)
    from bot.pullrequest import git_token

    # the shared memories follow too, fetched as the memory's recorded identity
    attached = shared.sync_all(repo, ready=git_token.ensure) if shared.attachments(repo) else []
    for done in attached:
        print(done.line)
    return 0 if all(done.ok for done in attached) else 1


def run_status(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from bot.follow import marker
    from bot.memfs import MemoryRepo, sync
    from bot.review import accounts

    repo = MemoryRepo.open(args.repo)
    state = sync.status(repo, fetch=args.fetch)
    waiting = _waiting(repo) if args.fetch else None
    found, reason = accounts.find(repo, ask=args.fetch and state.url is not None)
    if args.json:
        held = [record.as_data() for record in marker.held_records(marker.place(repo))]
        print(json.dumps({**state.as_data(), "follower": marker.status_data(repo), "waiting_for_review": held,
                          "agent_account": asdict(found) if found else None,
                          "same_account_as_reviewer": bool(found and found.same),
                          **({"pull_requests": waiting[0]} if waiting else {})}, indent=2))
        return 0
    rows = (marker.status_row(repo), *marker.held_rows(repo), *((waiting[1],) if waiting else ()),
            *(((ACCOUNTS_LABEL, accounts.said(found, reason)),) if found or reason else ()))
    for line in sync.status_lines(state, rows):
        print(line)
    return 0


def _waiting(repo: object) -> tuple[dict[str, object] | None, tuple[str, str]]:
    """The forge's open memory pull requests (asked only with --fetch): data and a status row."""
    from dataclasses import asdict

    from bot.review import waiting

    found, reason = waiting.count(repo)
    return (asdict(found) if found else None), (WAITING_LABEL, waiting.said(found, reason))
