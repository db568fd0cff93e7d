"""What the MCP server says to its clients and its operator: a refused argument or token, a
recorded message, search results and memory at a date. The tools' own words are in
templates/mcp/tools.yml.j2."""

from __future__ import annotations

MCP_UNREADABLE = "not a JSON-RPC message memrepo can read: {problem}"


