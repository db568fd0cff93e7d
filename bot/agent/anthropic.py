"""Claude's memory tool on an AgentSession, for agents built on the Anthropic SDK:
`AnthropicMemoryTool(session)` and `AsyncAnthropicMemoryTool(session)` (see
bot/anthropic_memory.py, where the adapter lives so the dreamer can use it too)."""

from bot.anthropic_memory import AnthropicMemoryTool, AsyncAnthropicMemoryTool, MemorySession, ToolError

__all__ = ["AnthropicMemoryTool", "AsyncAnthropicMemoryTool", "MemorySession", "ToolError"]
