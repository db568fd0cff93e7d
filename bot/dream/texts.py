"""What a dream says: to whoever asked for it (opened, nothing new, already open, failed), in
its pull request and in the memory files its verbatim strategy writes, and what its llm and
anthropic strategies report; the sentences the anthropic dreamer itself reads (its task, its
search tool) are here too. Its system prompts are templates (templates/prompts/)."""

from __future__ import annotations

# One dream, as the runner reports it.
DREAM_NO_AGENT = "which agent? give --agent, or set memrepo.agentId in the repository (memrepo init does)"








