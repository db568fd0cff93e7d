"""The operator credential: a random secret localhub writes into its data folder at first
start (`operator-token`, readable by its owner only), presented as `Authorization: Bearer
<secret>` (or `token <secret>`). Whoever can read the data folder runs this localhub; the
secret proves that over HTTP, for what a user's token must not do (a token for an account
that exists, an App installed on one). Kept in plain text on purpose: the CLI and tests read
it back. No third-party imports, so the CLI can read it without starting the forge.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

OPERATOR_FILE = "operator-token"
PREFIX = "lho_"  # like GitHub's token prefixes: says what the secret is when it leaks


def read_operator_token(data_dir: Path) -> str | None:
    """The operator secret of the localhub whose data is in `data_dir`, None before its first start."""
    try:
        secret = (Path(data_dir) / OPERATOR_FILE).read_text().strip()
    except OSError:
        return None
    return secret or None


def ensure_operator_token(data_dir: Path) -> str:
    """The operator secret, made on first use: written whole to a private file and linked into
    place, so two processes starting on one data folder agree and none reads half a secret."""
    found = read_operator_token(data_dir)
    if found is not None:
        return found
    path = Path(data_dir) / OPERATOR_FILE
    secret = PREFIX + secrets.token_hex(24)
    scratch = path.with_name(f".{OPERATOR_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(secret + "\n")
    try:
        os.link(scratch, path)
    except FileExistsError:  # another process made it first: theirs counts
        secret = path.read_text().strip()
    finally:
        scratch.unlink()
    return secret
