"""What shared memory says: refusals of attach, detach and sync, and their reports."""

from __future__ import annotations

from bot.texts import Text

RECORD_COMMENT = "# Shared memories attached to this agent: memrepo shared attach / detach change this file.\n"
RECORD_NOT_YAML = "{path} is not valid YAML: {problem}"
RECORD_BAD = "{path}: {problem}"
RECORD_NOT_MAPPING = "the file must hold `version: 1` and an `attached` list"
RECORD_BAD_VERSION = "version must be 1"
RECORD_BAD_ENTRY = "attached[{number}] must hold exactly name, url and read_only (a text, a text, true or false)"
RECORD_TWICE = "attached[{number}] repeats {what}"

NAME_EMPTY = "a shared memory's name cannot be empty"
NAME_BAD = ("{name!r} is not a valid folder name for a shared memory: use 1 to 64 letters, digits, dots, "
            "underscores and hyphens, not . or .., and not `memory` (reserved, as in Letta Code)")
NAME_USED = "a shared memory named {name} is already attached ({url}); detach it first or attach with --as OTHER"
URL_USED = "{url} is already attached as {name}; a memory attaches one repository once"
URL_IS_OWN = "{url} is this agent's own memory repository; attach another memory"
NOT_ATTACHED = "no shared memory named {name} is attached to {path} (memrepo shared list shows what is)"
FOLDER_TAKEN = "{path} already exists and is not the projection of {url}; move it away or attach with --as OTHER"
BAD_RULES = "{url} holds invalid rules, so it cannot be attached: {problem}"
UNREADABLE = "{url} cannot be read with this agent's forge token: {problem}"
CROSSES = "one call cannot move a file between memories ({first} and {second}): read one and write the other"
EVENTS_URL_BAD = "{url} is not an event stream URL (.../v1/repos/OWNER/NAME/events)"
NO_IDENTITY = ("git knows no one at {path} (user.name and user.email), and the record of a shared memory says "
               "who attached it: run git config --global user.name \"Your Name\" and git config --global "
               "user.email you@example.com, and run it again")
NOT_SYNCED = "shared memory {name} has no projection at {path} yet: run memrepo shared sync --repo {memory}"

ATTACHED = "attached {url} as {name} at {path} (main {sha}){read_only}; {pushed}"
ATTACHED_READ_ONLY = ", read-only"
DETACHED = "detached {name} ({url}); its projection at {path} is removed; {pushed}"
RECORD_PUSHED = "the record is pushed"
RECORD_LOCAL = "the record is committed here and reaches origin with the next sync"
ATTACH_MESSAGE = "shared: attach {name} ({url}){read_only}"
DETACH_MESSAGE = "shared: detach {name} ({url})"

SYNC_CLONED = "{name}: projected at {path} (main {sha})"
SYNC_MOVED = "{name}: {before} -> {after}"
SYNC_SAME = "{name}: up to date (main {sha})"
SYNC_DOWN = "{name}: could not sync, the projection stays at {sha}: {problem}"
SYNC_LOST = "{name}: removed the projection at {path}: this agent's forge token can no longer read {url} ({problem})"
SYNC_AHEAD = Text("{name}: the projection at {path} holds {count:|commit|commits} its forge's main lacks; "
                  "memrepo pushes nothing to a shared memory's main, so it is left as it is: write through the "
                  "memory tool (shared/{name}/...), which proposes a pull request, and reset the projection to "
                  "origin/main")
SYNC_NONE = "no shared memory is attached"

LIST_NONE = "no shared memory is attached to {path}"
LIST_ROW = "{name}  {url}  {head}  {state}"
STATE_READ_ONLY = "read-only"
STATE_WRITABLE = "read-write"
STATE_MISSING = "not projected (memrepo shared sync)"

# What git says when the forge refuses the token (not when it does not answer), in lower case.
ACCESS_LOST_SIGNS = ("not found", "authentication failed", "could not read username", "returned error: 401",
                     "returned error: 403", "returned error: 404", "permission denied", "access denied")
