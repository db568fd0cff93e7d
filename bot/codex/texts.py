"""What `memrepo codex` says: its help, what install and uninstall wrote, and what the hooks
tell Codex and its user."""

from __future__ import annotations

CODEX_HELP = "wire OpenAI's Codex CLI to this memory (MCP server, hooks and their trust)"


