"""The agent session runtime: what an agent harness drives to give its agent memory.

    from bot.agent import AgentSession

    with AgentSession("memory", "c1", events_url=url, agent_token=token) as session:
        prompt = session.system_prompt()
        session.record("user", "I moved to Paris.")
        result = session.handle_tool_call({"command": "str_replace", ...})
        session.command("/doctor")

Pure parts: commands (slash command parsing), routing (direct commit or pull request),
turns (what a turn is and whether it saw external content), sleeptime, doctor, render.
The shell: session, write_path (every memory write under the policy), tool (what a tool call
returns and where its edit went), proposal (an edit as a pull request).

The door offers the two names other packages use, as the plain imports below. They run on first
use (PEP 562): `memrepo tool` imports bot.agent.write_path, and Python loads this file first, so
importing the session here would make every tool call load the session, its dreams and the forge
client.
"""

from __future__ import annotations

TYPE_CHECKING = False  # type checkers read this name as theirs
if TYPE_CHECKING:
    from .session import AgentSession
    from .tool import EditResult

__all__ = ["AgentSession", "EditResult"]

# The package's lazy names (__init__.py): a name it does not have.
AGENT_NO_ATTRIBUTE = "module 'bot.agent' has no attribute {name!r}"


def __getattr__(name: str) -> object:
    if name == "AgentSession":
        from .session import AgentSession as found
    elif name == "EditResult":
        from .tool import EditResult as found
    else:
        raise AttributeError(AGENT_NO_ATTRIBUTE.format(name=name))
    globals()[name] = found
    return found
