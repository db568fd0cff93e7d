"""The MCP server (`memrepo mcp`): the memory tool, search and history as MCP tools, and the
compiled core memory as a resource announced as updated whenever HEAD moves.

catalog.py: what is offered (pure data); arguments.py: checking a call's arguments; writes.py:
the agent session every memory tool call (and memory_record) goes through, so edits are routed
to main or to a pull request by the agent's rules; search.py, past.py: the read-only tools;
head.py: HEAD watching and update announcements; server.py: the SDK server; transports.py:
stdio and streamable HTTP."""
