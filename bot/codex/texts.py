"""What `memrepo codex` says: its help, what install and uninstall wrote, and what the hooks
tell Codex and its user."""

from __future__ import annotations

CODEX_HELP = "wire OpenAI's Codex CLI to this memory (MCP server, hooks and their trust)"
CODEX_DESCRIPTION = """\
Make `codex` (interactive, or headless `codex exec`) use this memory with no further step.
Install merges into Codex's own config.toml ($CODEX_HOME, else ~/.codex; every other key and
comment kept):

  - [mcp_servers.memrepo]: `memrepo mcp --codex --repo MEMDIR`, required = true, so that the
    first request already has its tools (Codex otherwise sends it before the server is up);
    each write names the Codex session (Conversation-ID, from the call's _meta) and the turn
    (Transcript-Range, by the rollout's own item ids);
  - [[hooks.SessionStart]], [[hooks.UserPromptSubmit]] and [[hooks.Stop]]: the compiled core
    memory in the model's context at session start and again at the next prompt after the
    memory moved (once per HEAD), and each turn's rollout imported at its end (dreams then
    run on it as .memrepo/config.yml says);
  - [hooks.state]: the trusted_hash Codex records when a person trusts a hook in /hooks, for
    each of these three hooks: `codex exec` skips a hook without it.

With --project DIR the server and hooks go in DIR/.codex/config.toml, for that project only
(Codex loads it only for a project the user trusts), and their trust in the user's config.toml.
Codex's own memories ($CODEX_HOME/memories) are left alone. Running install again changes
nothing; `uninstall` takes out what install wrote and nothing else."""
INSTALL_HELP = "write the MCP server, the hooks and their trust into Codex's config.toml"
UNINSTALL_HELP = "take out what install wrote"
HOOK_HELP = "a Codex hook (reads the hook's JSON on standard input); install registers these"
REPO_HELP = "the memory folder (a clone of the memory repository; default: the current folder)"
CODEX_HOME_HELP = "Codex's home, where its config.toml and sessions are (default: $CODEX_HOME, else ~/.codex)"
HOOK_EVENT_HELP = "session-start (SessionStart), prompt (UserPromptSubmit) or stop (Stop)"

INSTALLED = "memrepo codex: Codex ({config}) uses the memory in {repo}"
ALREADY_INSTALLED = "memrepo codex: Codex ({config}) already uses the memory in {repo}; nothing changed"
UNINSTALLED = "memrepo codex: took the memory out of {config}"
NOT_INSTALLED = "memrepo codex: {config} had nothing of memrepo; nothing changed"
WHAT_SERVER = "[mcp_servers.memrepo]: memrepo's MCP server, required (its tools are in the first request)"
WHAT_HOOK = "[[hooks.{event}]]: {command}"
WHAT_TRUST = "[hooks.state] \"{key}\": trusted_hash {hash} (Codex runs this hook, in `codex exec` too)"
WHAT_REMOVED = "removed {what}"
WHAT_HOOKS_OF = "[[hooks.{event}]] and its trust"
PROJECT_TRUSTED = "memrepo codex: {project} is a trusted project in {config}, so Codex loads its .codex/config.toml"
PROJECT_UNTRUSTED = ("memrepo codex: Codex loads {project}/.codex/config.toml only for a trusted project, and {config} "
                     "does not trust it yet: trust it when Codex asks, or add [projects.\"{project}\"] with "
                     "trust_level = \"trusted\" (memrepo does not decide that for you)")
PROJECT_HELP = ("the project whose .codex/config.toml gets the server and hooks (Codex loads it only for a trusted "
                "project; their trust goes in the user's config.toml); default: the user's config.toml, every project")
UNREADABLE = ("{path} cannot be read as Codex's TOML configuration ({problem}); nothing was changed: mend or "
              "move it, then run the command again")
NOT_A_TABLE = "{path}: {key} is {kind}, not a table; nothing was changed"
NOT_A_MEMORY = "{repo} is not a memory repository with a commit (run `memrepo init` or clone one first)"
OTHER_SERVER = ("{path} already has an MCP server \"memrepo\" that is not memrepo's for Codex ({command}); "
                "nothing was changed: uninstall it first, or remove that table")

TRUSTS = ("memrepo codex: the memory trusts these tools' results (.memrepo/config.yml trusted_sources): {tools}. "
          "A Codex turn that ran a shell command (exec_command), searched the web or called another MCP server's "
          "tool sends its memory writes to a pull request a person approves, unless trusted_sources lists that "
          "tool (tool:exec_command, tool:web_search, tool:mcp__<server>__<tool>); edit it in {config} and commit it "
          "(a person approves that change).")
TRUSTS_NONE = ("memrepo codex: the memory trusts no tool's result (.memrepo/config.yml trusted_sources is empty): "
               "after any tool call of Codex's, a turn's memory writes become pull requests a person approves; "
               "list tools in trusted_sources in {config} and commit it to change that.")
HOOK_PROBLEM = "memrepo codex hook: {problem}"
HOOK_BAD_INPUT = "memrepo codex hook: the hook input on standard input is not a JSON object ({problem})"
HOOK_NO_SESSION = "the hook input names no session_id and transcript_path"
TRANSCRIPT_NOT_A_ROLLOUT = "did not import {path}: a Codex rollout is an absolute path ending in .jsonl"
TRANSCRIPT_ELSEWHERE = ("did not import {path}: it is not in Codex's sessions folder {folder}; to import it "
                        "anyway, name its folder in {env}")
