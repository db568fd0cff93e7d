"""Who wrote a commit: each writer has its own git identity, so history alone tells roles.

The domains are the contract of DESIGN.md: `<agent-id>@agents.memrepo`,
`<dream-id>@dreams.memrepo`, `integrator@bot.memrepo`; any other author is a person.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.errors import MemrepoError

AGENT_DOMAIN = "agents.memrepo"
DREAM_DOMAIN = "dreams.memrepo"
BOT_DOMAIN = "bot.memrepo"
ROLES = ("agent", "dreamer", "integrator", "human")

_AGENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class Identity:
    name: str
    email: str

    @property
    def role(self) -> str:
        return role_of(self.email)


def check_agent_id(agent_id: object) -> str:
    if not isinstance(agent_id, str) or not _AGENT_ID.match(agent_id):
        raise MemrepoError(
            f"agent id {agent_id!r} is not valid: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return agent_id


def agent(agent_id: str, name: str | None = None) -> Identity:
    agent_id = check_agent_id(agent_id)
    display = (name or agent_id).strip().replace("<", "").replace(">", "") or agent_id
    return Identity(display, f"{agent_id}@{AGENT_DOMAIN}")


def dreamer(dream_id: str) -> Identity:
    return Identity("memrepo dreamer", f"{dream_id}@{DREAM_DOMAIN}")


INTEGRATOR = Identity("memrepo integrator", f"integrator@{BOT_DOMAIN}")


def role_of(email: str) -> str:
    """The writer role an author email stands for."""
    domain = email.rpartition("@")[2].lower()
    if domain == AGENT_DOMAIN:
        return "agent"
    if domain == DREAM_DOMAIN:
        return "dreamer"
    if email.lower() == INTEGRATOR.email:
        return "integrator"
    return "human"
