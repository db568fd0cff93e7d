"""OpenAI's Codex CLI on a memrepo memory: `memrepo codex install` wires Codex to the memory
(MCP server, hooks and their trust, in Codex's config.toml), the hooks put the compiled core
memory in the model's context at session start and again when the memory moved, the MCP
server names the Codex session in every write, and the Stop hook imports the session's rollout
for dreams."""
