"""`memrepo identity`: record, per memory clone, the forge credential the agent writes with (a
second account's token, or a GitHub App installation), so the person can approve what the agent
proposes. The secret is read from a file or an environment variable (never the command line,
which `ps` shows), checked against the forge (the login it acts as, its permission on the
repository, that it is not the person's own account), kept in the clone's git directory for
its owner only (bot.agent_credential), and never printed."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from bot import agent_credential
from bot.agent_credential import Recorded
from bot.commands import texts
from bot.commands.actions import actions
from bot.errors import MemrepoError

if TYPE_CHECKING:
    from bot.forge.client import ForgeClient
    from bot.forge.credentials import Credentials
    from bot.memfs import MemoryRepo
    from bot.pullrequest.target import ForgeTarget

IDENTITY_SET_HELP = ("record the forge credential the agent writes with: an account's token (--token-file or "
                     "--token-env) or a GitHub App installation (--app-id, --app-key-file, --installation-id)")
IDENTITY_SHOW_HELP = "say which account the agent writes as, and where its credential comes from"
IDENTITY_CLEAR_HELP = ("forget the recorded identity: the agent writes with MEMREPO_FORGE_TOKEN, GITHUB_TOKEN "
                       "or the URL's")

RECORDED = ("The agent writes to {repository} as {login} from now on ({kind}, recorded in {path}, readable by you "
            "only); `memrepo review` keeps using your own token{person}.")
SHOW_RECORDED = "The agent writes to {repository} as {login} ({kind} recorded in {path}, from {source})."
SHOW_FALLBACK = ("No agent identity recorded for {repository}: the agent writes with {found}. "
                 "`memrepo identity set` gives it an account of its own.")
CLEARED = "Forgot the agent identity of {repository}: the agent writes with {found}."
PROJECTION = ("{path} is a shared memory's projection, and it writes as the memory it is attached to: "
              "run `memrepo identity set --repo {owner}` instead; nothing recorded")
NOTHING_TO_CLEAR = "No agent identity is recorded for {repository}: nothing changed."

NO_SECRET = "say where the agent's credential is: --token-file PATH, --token-env NAME, or --app-id with --app-key-file"
TWO_SECRETS = "give one credential: --token-file, --token-env or a GitHub App (--app-id), not several"
APP_INCOMPLETE = "a GitHub App needs --app-id, --app-key-file and --installation-id together"
BAD_APP_ID = "--app-id must be the App's number, found {value}"
UNREADABLE = "{what} {path} cannot be read ({problem}): nothing recorded"
EMPTY_FILE = "{path} is empty: nothing recorded"
ENV_UNSET = "the environment variable {name} is not set: nothing recorded"
ENV_BAD_NAME = "--token-env takes the variable's name (like AGENT_TOKEN), not a token: nothing recorded"
REFUSED_TOKEN = "the forge at {api} refused the {what} for {repository} ({problem}): nothing recorded"
SAME_AS_PERSON = ("the credential acts as {login}, your own account (the one `memrepo review` uses): the agent needs "
                  "an account of its own for you to approve what it proposes; nothing recorded")
CANNOT_WRITE = ("{login} may not write to {repository} (its permission: {permission}): give it write access "
                "(a collaborator with write, or the App installed there), then set it again; nothing recorded")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("identity", help=texts.IDENTITY_HELP, description=texts.IDENTITY_DESCRIPTION,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    action = actions(parser, repo_help=texts.REPOSITORY_DIR_HELP)

    set_parser = action("set", IDENTITY_SET_HELP, run_set)
    set_parser.add_argument("--token-file", metavar="PATH", help=texts.IDENTITY_TOKEN_FILE_HELP)
    set_parser.add_argument("--token-env", metavar="NAME", help=texts.IDENTITY_TOKEN_ENV_HELP)
    set_parser.add_argument("--app-id", metavar="ID", help=texts.IDENTITY_APP_ID_HELP)
    set_parser.add_argument("--app-key-file", metavar="PATH", help=texts.IDENTITY_APP_KEY_HELP)
    set_parser.add_argument("--installation-id", metavar="N", type=int, help=texts.IDENTITY_INSTALLATION_HELP)
    action("show", IDENTITY_SHOW_HELP, run_show).add_argument("--json", action="store_true",
                                                                help=texts.REVIEW_JSON_HELP)
    action("clear", IDENTITY_CLEAR_HELP, run_clear)


# ------------------------------------------------------------------------------------ reading the secret
def _read_file(path: str, what: str) -> str:
    try:
        text = Path(path).expanduser().read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        problem = getattr(exc, "strerror", None) or type(exc).__name__
        raise MemrepoError(UNREADABLE.format(what=what, path=path, problem=problem)) from None
    if not text:
        raise MemrepoError(EMPTY_FILE.format(path=path))
    return text


def candidate(args: argparse.Namespace, env: Mapping[str, str]) -> Recorded:
    """The identity the arguments name, its secret read (login not yet known), or a one-line refusal."""
    given = [bool(args.token_file), bool(args.token_env), bool(args.app_id or args.app_key_file
                                                               or args.installation_id is not None)]
    if sum(given) == 0:
        raise MemrepoError(NO_SECRET)
    if sum(given) > 1:
        raise MemrepoError(TWO_SECRETS)
    if args.token_file:
        return Recorded("", token=_read_file(args.token_file, "the token file"), source=f"file {args.token_file}")
    if args.token_env:
        name = args.token_env
        if not name.replace("_", "").isalnum() or not (name[0].isalpha() or name[0] == "_"):
            raise MemrepoError(ENV_BAD_NAME)
        token = (env.get(name) or "").strip()
        if not token:
            raise MemrepoError(ENV_UNSET.format(name=name))
        return Recorded("", token=token, source=f"variable {name}")
    if not (args.app_id and args.app_key_file and args.installation_id is not None):
        raise MemrepoError(APP_INCOMPLETE)
    if not str(args.app_id).isdecimal():
        raise MemrepoError(BAD_APP_ID.format(value=args.app_id))
    key = _read_file(args.app_key_file, "the App's private key file")
    return Recorded("", app_id=str(args.app_id), private_key=key + "\n", installation_id=args.installation_id,
                    source=f"App {args.app_id}, installation {args.installation_id}")


# ------------------------------------------------------------------------------------ the forge
def _client(target: ForgeTarget, credentials: Credentials) -> ForgeClient:
    from bot.forge.client import ForgeClient
    from bot.forge.retry import RetryPolicy

    return ForgeClient(target.repository, credentials, base_url=target.api_url,
                       policy=RetryPolicy(max_total_seconds=20.0, max_attempts=3, backoff_base=0.2, backoff_cap=2.0),
                       timeout=20, min_write_interval=0.0)


def verified(new: Recorded, target: ForgeTarget, env: Mapping[str, str]) -> tuple[Recorded, str | None]:
    """`new` with the login the forge says it acts as, once the forge said it may write and it is
    not the person's own account (and the person's login, when their token says it); else a
    one-line refusal."""
    from dataclasses import replace

    from bot import settings
    from bot.forge.credentials import AppCredentials, TokenCredentials
    from bot.forge.errors import Forbidden, ForgeConfigError, ForgeError

    repository, api = target.repository, target.api_url
    app = new.kind == "app"
    credentials: Credentials = (AppCredentials(new.app_id, new.private_key or "", new.installation_id) if app
                   else TokenCredentials(new.token or ""))
    what = f"App {new.app_id}'s installation {new.installation_id}" if app else "token"
    client = _client(target, credentials)
    try:
        login = client.own_login()
        if app:
            client.get_ref("heads/main")  # an installation token, used on the repository
            permission = None
        else:
            try:
                permission = client.permission(login)
            except Forbidden:  # GitHub: "Must have push access to view collaborator permission"
                permission = "read"
    except (ForgeError, ForgeConfigError) as exc:
        raise MemrepoError(REFUSED_TOKEN.format(api=api, what=what, repository=repository,
                                                problem=" ".join(str(exc).split())[:300])) from None
    finally:
        client.close()
    person = _person(target, settings.first_value(settings.REVIEW_TOKENS, env))
    refused = agent_credential.refusal(login, permission, person)
    if refused == "same":
        raise MemrepoError(SAME_AS_PERSON.format(login=login))
    if refused == "cannot-write":
        raise MemrepoError(CANNOT_WRITE.format(login=login, repository=repository, permission=permission))
    return replace(new, login=login), person


def _person(target: ForgeTarget, token: str | None) -> str | None:
    """The person's login, read with the person's own token (None without one, or when the forge
    does not say)."""
    from bot.forge.credentials import TokenCredentials
    from bot.forge.errors import ForgeConfigError, ForgeError

    if not token:
        return None
    client = _client(target, TokenCredentials(token))
    try:
        return str(client.own_login())
    except (ForgeError, ForgeConfigError):
        return None
    finally:
        client.close()


def _target(repo: MemoryRepo, env: Mapping[str, str]) -> ForgeTarget:
    from bot.memfs.sync import remote_url
    from bot.pullrequest.target import forge_target

    return forge_target(remote_url(repo), env)


def _fallback(repo: MemoryRepo, env: Mapping[str, str]) -> str:
    """Where the agent's token comes from without a recorded identity, named, never shown."""
    from bot.review.accounts import source

    return source(repo, env)[1]


# ------------------------------------------------------------------------------------ the actions
def run_set(args: argparse.Namespace) -> int:
    from bot.memfs import MemoryRepo

    env = dict(os.environ)
    repo = MemoryRepo.open(args.repo)
    owner = agent_credential.owner_of(repo.root)
    if owner is not None:  # a projection writes as its owner: a record here would never be read
        raise MemrepoError(PROJECTION.format(path=repo.root, owner=owner))
    target = _target(repo, env)
    new, person = verified(candidate(args, env), target, env)
    path = agent_credential.write(repo.root, new)
    print(RECORDED.format(repository=target.repository, login=new.login, path=path,
                          kind="a GitHub App installation" if new.kind == "app" else "an account's token",
                          person=f" ({person})" if person else ""))
    return 0


def run_show(args: argparse.Namespace) -> int:
    from bot.memfs import MemoryRepo

    env = dict(os.environ)
    repo = MemoryRepo.open(args.repo)
    target = _target(repo, env)
    recorded = agent_credential.read(repo.root)
    repository = target.repository
    if args.json:
        data = {"repository": repository, "recorded": recorded is not None,
                "login": recorded.login if recorded else None, "kind": recorded.kind if recorded else None,
                "source": recorded.source if recorded else _fallback(repo, env),
                "path": str(agent_credential.record_path(repo.root)) if recorded else None}
        print(json.dumps(data, indent=2))
    elif recorded is not None:
        print(SHOW_RECORDED.format(repository=repository, login=recorded.login, kind=recorded.kind,
                                   path=agent_credential.record_path(repo.root), source=recorded.source))
    else:
        print(SHOW_FALLBACK.format(repository=repository, found=_fallback(repo, env)))
    return 0


def run_clear(args: argparse.Namespace) -> int:
    from bot.memfs import MemoryRepo
    from bot.memfs.sync import redact, remote_url

    env = dict(os.environ)
    repo = MemoryRepo.open(args.repo)
    repository = redact(remote_url(repo) or str(repo.root))
    if agent_credential.clear(repo.root):
        print(CLEARED.format(repository=repository, found=_fallback(repo, env)))
    else:
        print(NOTHING_TO_CLEAR.format(repository=repository))
    return 0
