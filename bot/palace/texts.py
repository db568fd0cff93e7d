"""What the palace says outside its pages (their own words are in templates/palace/): who may
open it, a page asked for wrongly, and what the forge could not tell it."""

from __future__ import annotations

PALACE_TOKEN_REQUIRED = ("{host} is not a loopback address: anyone who reaches it could read memory, so a token "
                         "is required; pass --token (at least 16 characters, e.g. from `python3 -c 'import secrets; "
                         "print(secrets.token_urlsafe(24))'`) or set MEMREPO_PALACE_TOKEN, or serve on 127.0.0.1")
PALACE_TOKEN_SHORT = "the token is too short: use at least {minimum} characters (a guessable token protects nothing)"
PALACE_CANNOT_LISTEN = "cannot listen on {host}:{port} ({problem}); choose another --port or --host"
PALACE_STOPPED = "memrepo palace: stopped"
PALACE_NO_PATH = "no file named: add ?path=PATH (a file of memory, such as system/human.md)"
PALACE_BAD_PATH = "{path!r} is not a path of memory: use a relative path such as system/human.md"
PALACE_BAD_LINE = "line {value!r} is not a line number: use a whole number from 1"
PALACE_BAD_PAGE = "page {value!r} is not a page number: use a whole number from 1"
PALACE_BAD_WRITER = "writer {value!r} is not a writer: use one of {roles}, or leave it empty"
PALACE_EMPTY_RANGE = "since {since} is after until {until}; nothing can be in between"
PALACE_FORGE_DISABLED = "the forge is not asked (--no-forge)"
PALACE_FORGE_FAILED = "the forge could not be asked for open pull requests ({problem}); they are not shown"
PALACE_FORGE_UNREACHABLE = ("The forge of {repository} could not be reached, so its open pull requests are not shown. "
                            "Check that it is running (for the local stack: memrepo serve --local) and that this "
                            "memory's origin names it, then reload this page.")
PALACE_REFUSED = ("this palace needs its token: open it once with ?token=TOKEN, or send 'Authorization: Bearer "
                  "TOKEN'")
PALACE_WRONG_HOST = ("this palace answers only at a loopback name (127.0.0.1, localhost, [::1]); start it with "
                     "--host and --token to serve other names")
PALACE_NOT_FOUND = "not a page of the palace: /, /why, /file, /log and /at are"
PALACE_INTERNAL = "the palace failed to show this page ({error}); the log of `memrepo palace` has the details"
