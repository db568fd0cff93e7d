"""Memory documents for the three-way markdown merge's tests (tests/memfs/test_merge_markdown.py)
and the integrator's resolver's (tests/integrator/test_integrator_resolve.py): a base, two sides
that conflict on one line of prose, and the answer that resolves them."""

from __future__ import annotations

import json
from typing import Any

from bot.memfs.merge.markdown import Resolution, resolve_markdown

PATH = "reference/notes.md"


def doc(body: str, description: str = "notes", **keys: Any) -> str:
    head = f"description: {description}\n" + "".join(f"{k}: {json.dumps(v)}\n" for k, v in keys.items())
    return f"---\n{head}---\n{body}"


BODY = "# Facts\n- alpha\n- beta\n- gamma\n\nSome prose about things.\nMore prose.\n"
BASE = doc(BODY)
OURS_PROSE = doc(BODY.replace("Some prose", "Our prose"))
THEIRS_PROSE = doc(BODY.replace("Some prose", "Their prose"), limit=9)
GOOD = doc(BODY.replace("Some prose", "Our and their prose"), limit=9)


def merged(base: str, ours: str, theirs: str, **kw: Any) -> Resolution:
    return resolve_markdown(PATH, base, ours, theirs, **kw)
