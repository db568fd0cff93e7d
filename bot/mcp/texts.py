"""What the MCP server says to its clients and its operator: a refused argument or token, a
recorded message, search results and memory at a date. The tools' own words are in
templates/mcp/tools.yml.j2."""

from __future__ import annotations

MCP_NO_CLAUDE_SESSION = (
    "--claude-code: CLAUDE_CODE_SESSION_ID is not set; Claude Code sets it for the MCP servers it starts "
    "(outside Claude Code, give --conversation ID instead)"
)
MCP_RECORD_REFUSED = "memory_record: {problem}; nothing was recorded"
MCP_UNREADABLE = "not a JSON-RPC message memrepo can read: {problem}"
MCP_MESSAGE_LONG = "the message is {size} bytes long, more than the {limit} memrepo reads"
MCP_MESSAGE_LONG_SENT = "the message is longer than the {limit} bytes memrepo reads"
MCP_MESSAGE_DEEP = "the message nests arrays and objects deeper than {limit} levels, more than memrepo reads"
MCP_TOKEN_REQUIRED = ("memrepo mcp --http on {host} would let anyone who reaches it change memory: set a bearer "
                      "token in {name} (clients send Authorization: Bearer <token>), or serve on 127.0.0.1")
MCP_TOKEN_SHORT = ("{name} is too short: use at least {minimum} characters (a guessable token protects nothing; "
                   "make one with `python3 -c 'import secrets; print(secrets.token_urlsafe(24))'`)")
MCP_NO_BEARER = "this MCP server needs Authorization: Bearer <token> (the token in {name} where it runs)"
MCP_WRONG_BEARER = "the bearer token is not this MCP server's"
MCP_FOREIGN_HOST = ("this MCP server answers only requests addressed to a loopback name, not {host!a} (a page "
                    "whose name was made to resolve to this machine)")
MCP_CROSS_SITE = "this MCP server answers no request a web page on another origin sent ({why})"
MCP_RECORDED = "recorded {kind} message {id} from {source} in conversation {conversation} (turn {turn})."
MCP_RECORDED_UNTRUSTED = ("The context holds untrusted content ({sources}): every memory edit goes to a pull "
                          "request a person must approve until the context no longer holds it (record a "
                          "`compaction` message when it was dropped or summarised away).")
MCP_RECORDED_DREAM = "dream: {outcome}"
MCP_BAD_PORT = "--http must be a port from 0 to 65535, found {port}"
MCP_SERVING_HTTP = "memrepo mcp: serving {root} at {url} (Ctrl-C stops)"
MCP_UNKNOWN_TOOL = "unknown tool '{name}'; this server has: {tools}"
MCP_UNKNOWN_RESOURCE = "unknown resource {uri}; this server has: {uris}"
MCP_TOOL_BUG = "{tool} failed unexpectedly ({error}); this is a bug in memrepo, please report it"
MCP_ARG_MISSING = "{tool} needs the argument '{name}'"
MCP_ARG_UNKNOWN = "{tool} does not take the argument '{name}' (it takes: {accepted})"
MCP_ARG_TYPE = "{tool}: '{name}' must be {expected}, found {kind}"
MCP_ARG_CHOICE = "{tool}: '{name}' must be one of: {choices}"
MCP_ARG_RANGE = "{tool}: '{name}' must be {bounds}, found {value}"
MCP_ARG_EMPTY = "{tool}: '{name}' must not be empty"
MCP_ARG_PAIR = "{tool}: '{name}' must be two whole numbers [first line, last line]"
MCP_ARG_INVALID = "{tool}: '{name}' is not valid"
MCP_SEARCH_FILES_HEADER = "Memory files ({count}):"
MCP_SEARCH_FILE = "{rank}. {path}:{line}: {snippet}"
MCP_SEARCH_NO_FILES = "No memory file matches {query!r}."
MCP_SEARCH_MESSAGES_HEADER = "Conversation messages ({count}):"
MCP_SEARCH_MESSAGE = "{rank}. {time} {conversation} {kind} {message_id} (score {score:.2f}): {snippet}"
MCP_SEARCH_NO_MESSAGES = "No conversation message matches {query!r}."
MCP_SEARCH_NO_TRANSCRIPTS = "No conversation of agent {agent} is recorded (in {home})."

# memory_at (past.py).
MCP_AT_HEADER = "Memory at {when}: commit {commit} of {committed_at} by {author} ({role}): {summary}{latest}"
MCP_AT_LATEST = " (still the latest)"
MCP_AT_FILE = "{path} as it was then:"
MCP_AT_FILE_LINE = "{path} ({size:,} bytes){description}"

# How a value and a JSON Schema type read inside an argument's refusal ("'k' must be a whole
# number, found text"), and the bounds of a number.
# What a value given is, by the name of its Python type (from JSON: str, bool, int, float, list,
# dict or None).
VALUE_KINDS = {"str": "text", "bool": "true/false", "int": "a whole number", "float": "a number", "list": "a list",
               "dict": "an object", "NoneType": "null"}
# What a JSON Schema type asks for.
SCHEMA_TYPES = {"string": "text", "integer": "a whole number", "number": "a number", "boolean": "true or false",
                "array": "a list", "object": "an object"}
BOUNDS_BOTH = "from {low} to {high}"
BOUNDS_LOW = "at least {low}"
BOUNDS_HIGH = "at most {high}"
