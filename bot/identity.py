"""Who wrote a commit: each writer has its own git identity, so history alone tells roles.

The domains are the contract of docs/architecture.md §5.5: `<agent-id>@agents.memrepo`,
`<dream-id>@dreams.memrepo`, `integrator@bot.memrepo`. A merge the integrator asks the forge
for is written by the forge, not by memrepo: GitHub (and localhub) make the merging account
its author and themselves its committer, so `commit_role` also reads the integrator's forge
account from there. Any other author is a person.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from bot.contracts import DREAM_BRANCH_PREFIX, EDIT_BRANCH_PREFIX, check_id
from bot.settings import bot_login

AGENT_DOMAIN = "agents.memrepo"
DREAM_DOMAIN = "dreams.memrepo"
BOT_DOMAIN = "bot.memrepo"
ROLES = ("agent", "dreamer", "integrator", "human")


@dataclass(frozen=True)
class Identity:
    name: str
    email: str

    @property
    def role(self) -> str:
        return role_of(self.email)


def check_agent_id(agent_id: object) -> str:
    """The agent id of a commit's author: the transcripts' rule (bot.contracts), so an agent that
    writes memory can also be recorded, and the other way round."""
    return check_id(agent_id, "agent_id")


def agent(agent_id: str, name: str | None = None) -> Identity:
    agent_id = check_agent_id(agent_id)
    display = (name or agent_id).strip().replace("<", "").replace(">", "") or agent_id
    return Identity(display, f"{agent_id}@{AGENT_DOMAIN}")


def dreamer(dream_id: str) -> Identity:
    return Identity("memrepo dreamer", f"{dream_id}@{DREAM_DOMAIN}")


INTEGRATOR = Identity("memrepo integrator", f"integrator@{BOT_DOMAIN}")


# GitHub's committer on the merges and web edits it makes for an account ("web-flow").
WEB_FLOW_EMAIL = "noreply@github.com"
# The forge account `memrepo serve --local` gives the integrator, on localhub (whose no-reply
# addresses end in `@users.noreply.localhub`).
LOCAL_BOT_LOGIN = "memrepo-bot"
LOCALHUB_NOREPLY_HOST = "localhub"
# `<id>+<login>@users.noreply.<host>` (or `<login>@...`, GitHub's older form): the address
# GitHub, GitHub Enterprise and localhub write for an account that keeps its email private,
# and for every App's `<slug>[bot]` account.
_NOREPLY = re.compile(r"(?:[0-9]+\+)?(?P<login>[^@+\s]+)@users\.noreply\.(?P<host>[^@\s]+)", re.IGNORECASE)
# GitHub's default title of a merge commit, for a branch only memrepo opens pull requests from.
_BRANCHES = "|".join(re.escape(prefix) for prefix in (DREAM_BRANCH_PREFIX, EDIT_BRANCH_PREFIX))
_MEMREPO_MERGE = re.compile(rf"Merge pull request #[0-9]+ from [^/\s]+/(?:{_BRANCHES})\S")


def forge_account(email: str) -> tuple[str, str] | None:
    """(login, host) of a forge's no-reply address, else None."""
    match = _NOREPLY.fullmatch(email.strip())
    return None if match is None else (match.group("login"), match.group("host").lower())


def merges_memrepo_branch(message: str) -> bool:
    """Whether a commit message is the forge's merge of a dream or agent-edit pull request."""
    return bool(_MEMREPO_MERGE.match(message))


def is_bot_account(email: str, bot_logins: Iterable[str] = ()) -> bool:
    """Whether `email` is the no-reply address of an account the integrator acts as: one of
    `bot_logins` (the deployment's MEMREPO_BOT_LOGIN) on any forge, or `serve --local`'s on
    localhub. Logins are compared ignoring case, as GitHub does."""
    account = forge_account(email)
    if account is None:
        return False
    login, host = account[0].lower(), account[1]
    if login in {b.strip().lower() for b in bot_logins if b and b.strip()}:
        return True
    return host == LOCALHUB_NOREPLY_HOST and login == LOCAL_BOT_LOGIN


def role_of(email: str, bot_logins: Iterable[str] = ()) -> str:
    """The writer role an author email stands for."""
    domain = email.rpartition("@")[2].lower()
    if domain == AGENT_DOMAIN:
        return "agent"
    if domain == DREAM_DOMAIN:
        return "dreamer"
    if email.lower() == INTEGRATOR.email or is_bot_account(email, bot_logins):
        return "integrator"
    return "human"


def commit_role(author_email: str, committer_email: str = "", message: str = "",
                bot_logins: Iterable[str] = ()) -> str:
    """The writer role of a commit, from what the commit carries: its author's address
    (memrepo's own domains, or the integrator's forge account), and for a merge the forge
    made, its committer and title. A GitHub App acts as `<slug>[bot]`, an account no person
    can hold, so a merge of a dream or agent-edit branch committed by GitHub's web flow with
    such an account as the merger is the integrator's, even where the deployment's bot login
    is not known. A person who merges the same pull request on the web is its author, so
    that merge stays theirs."""
    role = role_of(author_email, bot_logins)
    if role != "human":
        return role
    account = forge_account(author_email)
    if (account is not None and account[0].lower().endswith("[bot]")
            and committer_email.strip().lower() == WEB_FLOW_EMAIL and merges_memrepo_branch(message)):
        return "integrator"
    return "human"


def writer(author_email: str, committer_email: str, message: str) -> str:
    """`commit_role` with the integrator's forge login of this deployment (MEMREPO_BOT_LOGIN):
    the role `memrepo log`, `why` and `at` give a commit."""
    return commit_role(author_email, committer_email, message, (bot_login() or "",))
