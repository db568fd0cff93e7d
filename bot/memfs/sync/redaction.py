"""Credentials never leave memrepo: every text that may hold a remote's URL (git echoes URLs)
is redacted before it reaches a log, an error or the agent, and a remote URL is checked before
git ever sees it."""

from __future__ import annotations

import re

from bot.errors import MemrepoError

REMOTE_URL_EMPTY = (
    "the remote URL is empty; give a git URL such as https://github.com/owner/memory.git or a path"
)

_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s]+@")
_ACCESS_TOKEN = re.compile(r"(?i)\bx-access-token:[^@\s]*@")
_TOKENS = re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{10,}|github_pat_[A-Za-z0-9_]{10,})")
_AUTH_HEADER = re.compile(r"(?i)(authorization:\s*(?:basic|bearer|token)\s+)\S+")


def redact(text: str) -> str:
    """Remove credentials from a URL or from anything git printed (git echoes URLs)."""
    text = _URL_USERINFO.sub(r"\1***@", text)
    text = _ACCESS_TOKEN.sub("***@", text)
    text = _TOKENS.sub("***", text)
    return _AUTH_HEADER.sub(r"\1***", text)


def check_url(url: object) -> str:
    """A remote URL worth trying: non-empty, one token, not an option."""
    if not isinstance(url, str) or not url.strip():
        raise MemrepoError(REMOTE_URL_EMPTY)
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        shown = redact("".join(ch if ch.isprintable() and not ch.isspace() else "?" for ch in url))
        raise MemrepoError(f"the remote URL '{shown}' contains whitespace or control characters")
    if url.startswith("-"):
        raise MemrepoError(f"the remote URL '{redact(url)}' starts with '-'; give a git URL or a path")
    return url
