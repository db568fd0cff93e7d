"""The agent session runtime: what an agent harness drives to give its agent memory.

    from bot.agent import AgentSession

    with AgentSession("memory", "c1", events_url=url, agent_token=token) as session:
        prompt = session.system_prompt()
        session.record("user", "I moved to Paris.")
        result = session.handle_tool_call({"command": "str_replace", ...})
        session.command("/doctor")

Pure parts: commands (slash command parsing), routing (direct commit or pull request),
turns (what a turn is and whether it saw external content), sleeptime, doctor, render.
The shell: session, tool (the memory tool's preview), proposal (an edit as a pull request).
"""

from bot.agent.commands import Command, parse_command
from bot.agent.routing import EditFacts, Route, changed_lines, route_edit
from bot.agent.session import AgentSession, CommandResult
from bot.agent.tool import EditResult
from bot.agent.turns import Turn

__all__ = ["AgentSession", "Command", "CommandResult", "EditFacts", "EditResult", "Route", "Turn",
           "changed_lines", "parse_command", "route_edit"]
