"""Claude Code on a memrepo memory: `memrepo claude-code install` wires a project's Claude Code
to the memory (MCP server, tool permission, hooks), and the hooks put the compiled core memory
in the model's context at session start and again when the memory moved."""
