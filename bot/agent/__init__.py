"""The agent session runtime: what an agent harness drives to give its agent memory.

    from bot.agent import AgentSession

    with AgentSession("memory", "c1", events_url=url, agent_token=token) as session:
        prompt = session.system_prompt()
        session.record("user", "I moved to Paris.")
        result = session.handle_tool_call({"command": "str_replace", ...})
        session.command("/doctor")

Pure parts: commands (slash command parsing), routing (direct commit or pull request),
turns (what a turn is and whether it saw external content), sleeptime, doctor, render.
The shell: session, write_path (every memory write under the policy), tool (the memory tool's
preview), proposal (an edit as a pull request).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# What each public name is imported from, on first use: `from bot.agent import AgentSession`
# works as ever, and a command that needs only the write path (`memrepo tool`) does not load
# the session, its dreams and the forge client.
_WHERE = {"AgentSession": "session", "CommandResult": "session", "Command": "commands", "parse_command": "commands",
          "EditFacts": "routing", "Route": "routing", "changed_lines": "routing", "route_edit": "routing",
          "EditResult": "tool", "Turn": "turns", "WritePath": "write_path"}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(import_module("bot.agent.texts").AGENT_NO_ATTRIBUTE.format(name=name))
    return getattr(import_module(f"bot.agent.{_WHERE[name]}"), name)
