"""Jinja templates from `templates/`: the files of a new memory repository, messages that
are longer than a line, and (later) pull request bodies."""

from __future__ import annotations

import importlib.resources
from functools import cache
from pathlib import Path

import jinja2


@cache
def templates_root() -> Path:
    """`templates/` of a source checkout (or editable install), else the installed copy."""
    source = Path(__file__).resolve().parent.parent / "templates"
    if source.is_dir():
        return source
    return Path(str(importlib.resources.files("bot.templates")))


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_root())),
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )


def render(name: str, **context: object) -> str:
    return environment().get_template(name).render(**context)
