"""What `memrepo claude-code` says: its help, what install and uninstall wrote, and what the hooks
tell Claude Code and its user."""

from __future__ import annotations

CLAUDE_CODE_HELP = "wire Claude Code in a project to this memory (MCP server, permission, hooks)"
CLAUDE_CODE_DESCRIPTION = """\
Make `claude` started in a project use this memory with no further step, interactive or
headless (`claude -p`):

  - PROJECT/.mcp.json registers `memrepo mcp --claude-code --repo MEMDIR` as the MCP server
    "memrepo" (project scope: where Claude Code keeps a project's MCP servers); each write it
    makes names the session (Conversation-ID) and the turn (Transcript-Range);
  - PROJECT/.claude/settings.local.json (this machine's settings of the project, not shared)
    adds the hooks that put the compiled core memory in the model's context at session start
    (startup, resume, clear, compact) and again at the next prompt after the memory moved,
    and that import the session's transcript at the end of each turn and of the session
    (dreams then run on it as .memrepo/config.yml says); it approves the "memrepo" server of
    .mcp.json and allows its tools (mcp__memrepo). Headless runs deny tools no setting allows,
    and Claude Code ignores the allow rules of the shared .claude/settings.json in a folder
    nobody has trusted; it honours the local file's. It also sets MCP_CONNECTION_NONBLOCKING
    to false for the session: Claude Code otherwise sends a headless run's first request
    before the MCP server is connected, without the memory's tools.

With --auto-memory [FOLDER], settings.local.json also points Claude Code's auto memory
(autoMemoryDirectory) at FOLDER inside the memory and adds a PostToolUse hook on Write and Edit:
each write there is committed by the memory's agent with the session's provenance, under the
memory's rules (a protected path, a large edit or an untrusted turn becomes a pull request).

Entries already there are kept; running it again changes nothing. `uninstall` takes out what
install wrote and nothing else."""
INSTALL_HELP = "write the MCP server, permission and hooks for a project"
UNINSTALL_HELP = "take out what install wrote"
HOOK_HELP = "a Claude Code hook (reads the hook's JSON on standard input); install registers these"
REPO_HELP = "the memory folder (a clone of the memory repository; default: the current folder)"
PROJECT_HELP = "the project where `claude` is started (default: the current folder)"
HOOK_EVENT_HELP = ("session-start (SessionStart), prompt (UserPromptSubmit), stop (Stop), session-end (SessionEnd) "
                   "or post-tool (PostToolUse)")
AUTO_MEMORY_HELP = ("also keep Claude Code's own auto memory in FOLDER of the memory (default: auto-memory), "
                    "its writes committed, reviewed and synced like any agent edit")

INSTALLED = "memrepo claude-code: {project} uses the memory in {repo}"
ALREADY_INSTALLED = "memrepo claude-code: {project} already uses the memory in {repo}; nothing changed"
UNINSTALLED = "memrepo claude-code: took the memory out of {project}"
NOT_INSTALLED = "memrepo claude-code: {project} had nothing of memrepo; nothing changed"
WROTE = "  {path}: {what}"
WHAT_MCP = "MCP server \"memrepo\""
WHAT_LOCAL = ("SessionStart, UserPromptSubmit, Stop and SessionEnd hooks; .mcp.json's \"memrepo\" approved, its "
              "tools allowed and waited for at start")
UNREADABLE = ("{path} cannot be read as JSON settings ({problem}); nothing was changed: mend or move it, "
              "then run the command again")
NOT_AN_OBJECT = "{path} holds {kind}, not a JSON object of settings; nothing was changed"
NOT_A_MEMORY = "{repo} is not a memory repository with a commit (run `memrepo init` or clone one first)"
OTHER_SERVER = ("{path} already registers an MCP server \"memrepo\" that is not this memory's ({command}); "
                "nothing was changed: uninstall it first, or remove that entry")

TRUSTS = ("memrepo claude-code: the memory trusts these tools' results (.memrepo/config.yml trusted_sources): "
          "{tools}; a turn that read only these writes memory straight to main. Any other tool's result "
          "(WebFetch, WebSearch, Bash, other MCP servers' tools) sends that turn's memory writes to a pull "
          "request a person approves. To change it, edit trusted_sources in {config} and commit it (a person "
          "approves that change); `trusted_sources: []` trusts none.")
TRUSTS_NONE = ("memrepo claude-code: the memory trusts no tool's result (.memrepo/config.yml trusted_sources is "
               "empty): after any Read, Grep or Glob, a turn's memory writes become pull requests a person "
               "approves. To trust reading this machine's files, list tool:Read, tool:Grep, tool:Glob, tool:LS "
               "and tool:NotebookRead under trusted_sources in {config} and commit it.")

HOOK_PROBLEM = "memrepo {label} hook: {problem}"
HOOK_BAD_INPUT = "memrepo claude-code hook: the hook input on standard input is not a JSON object ({problem})"
TRANSCRIPT_NOT_A_SESSION = "did not import {path}: a Claude Code session file is an absolute path ending in .jsonl"
TRANSCRIPT_ELSEWHERE = ("did not import {path}: it is not in this session's project folder {folder} of Claude "
                        "Code's projects directory; to import it anyway, name its folder in {env}")
TRANSCRIPT_NO_CWD = "(the hook input names no cwd)"
HOOK_INPUT_TOO_LONG = "it is longer than {limit} characters"
MEMORY_CHANGED = "The memory changed since it was last shown; this is the memory now:\n\n{memory}"
HOOK_NO_SESSION = "the hook input names no session_id and transcript_path"
NO_AGENT = "{repo} has no agent (memrepo.agentId in its git config): run `memrepo init` or `memrepo clone` for one"
DREAM_RAN = "{at} {outcome}"
DREAM_FAILED = "{at} a dream did not run: {problem}"
WHAT_AUTO_MEMORY = "Claude Code's auto memory in {folder}, its writes committed by a PostToolUse hook"
OTHER_AUTO_MEMORY = ("{path} already points Claude Code's auto memory at {folder}, outside this memory; nothing "
                     "was changed: remove that setting first, or install without --auto-memory")
AUTO_MEMORY_OUTSIDE = "--auto-memory {folder}: the folder must be inside the memory ({repo}), and not in .git"
AUTO_MEMORY_REASON = "Claude Code's auto memory: {tool} {path}"
AUTO_MEMORY_REFUSED = ("memrepo did not keep this write to the memory, and put the file back as it was: {problem} "
                       "Change the write so that it meets this, and write the file again.")
AUTO_MEMORY_PULL_REQUEST = "memrepo: this auto memory write is not in main yet: {message}"
