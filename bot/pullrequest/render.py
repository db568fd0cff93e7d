"""What every pull request body does to text it did not write: a transcript's, a model's or an
agent's words (a dream's summary and quotes, an edit's reason and what the user said) are made
inert in markdown before a body template holds them. Pure. `memrepo why` undoes it when it
reads quotes back (bot/provenance/quoted.py)."""

from __future__ import annotations


def safe_text(text: str) -> str:
    """Text from a transcript or a model, made inert in markdown: no raw HTML (a stray
    `<!--` would hide the rest of the body, or fake a provenance block)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def plain_text(text: str) -> str:
    """Undo `safe_text`: the text as it was before a body held it."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
