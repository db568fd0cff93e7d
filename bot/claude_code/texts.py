"""What `memrepo claude-code` says: its help, what install and uninstall wrote, and what the hooks
tell Claude Code and its user."""

from __future__ import annotations

CLAUDE_CODE_HELP = "wire Claude Code in a project to this memory (MCP server, permission, hooks)"



