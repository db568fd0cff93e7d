"""A memory file: YAML frontmatter between two `---` lines, then a markdown body.

The parser is strict on purpose (a missing closing `---` is an error, not "no frontmatter"),
because the validator must say exactly what is wrong; rendering goes through
python-frontmatter so files look like every other frontmatter tool writes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import frontmatter
import yaml

from bot import messages
from bot.config import load_yaml, yaml_problem


class DocumentError(ValueError):
    """The text is not a well-formed memory document; str() is the validation message."""


@dataclass(frozen=True)
class Document:
    frontmatter: dict[str, Any]
    body: str

    @property
    def description(self) -> str:
        value = self.frontmatter.get("description")
        return value.strip() if isinstance(value, str) else ""


def split(text: str) -> tuple[str, str]:
    """Return (frontmatter text, body) or raise DocumentError with Letta's message."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n").rstrip() != "---":
        raise DocumentError(messages.MISSING_FRONTMATTER)
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r\n").rstrip() == "---":
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    raise DocumentError(messages.UNCLOSED_FRONTMATTER)


def parse(text: str) -> Document:
    """Parse a memory document; the frontmatter must be a YAML mapping (or empty), or else
    lines of `key: value` as Letta Code writes them (`line_fields`)."""
    head, body = split(text)
    try:
        data = load_yaml(head) if head.strip() else {}
    except yaml.YAMLError as exc:
        fields = line_fields(head)
        if fields is None:
            raise DocumentError(messages.BAD_YAML.format(problem=yaml_problem(exc, first_line=2))) from None
        return Document(fields, body)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise DocumentError(messages.NOT_MAPPING.format(kind=type(data).__name__))
    return Document({str(key): value for key, value in data.items()}, body)


def line_fields(head: str) -> dict[str, Any] | None:
    """Frontmatter that is not YAML read line by line, as Letta Code reads it: each line
    `key: value` (indented lines continue the one before and are skipped), the value as YAML
    reads it alone when that is one scalar, else (`description: Notes: tea`, which Letta's tool
    writes as it is) its text. None when a line has no `key:`."""
    fields: dict[str, Any] = {}
    for line in head.splitlines():
        if not line.strip() or line[0] in " \t":
            continue
        colon = line.find(":")
        if colon <= 0:
            return None
        raw = line[colon + 1:].strip()
        try:
            value = load_yaml(raw) if raw else None
        except yaml.YAMLError:
            value = raw
        fields[line[:colon].strip()] = raw if isinstance(value, (dict, list)) else value
    return fields


def try_parse(text: str) -> Document | None:
    try:
        return parse(text)
    except DocumentError:
        return None


def render(fields: dict[str, Any], body: str) -> str:
    """Text of a memory document with these frontmatter fields (in order) and body."""
    post = frontmatter.Post(body.strip("\n"), **fields)
    text = frontmatter.dumps(post, sort_keys=False, allow_unicode=True, width=1 << 30)
    return text + "\n"


def with_description(text: str, description: str) -> str:
    """The same document with a new description; other keys and the body are kept."""
    doc = parse(text)
    fields = dict(doc.frontmatter)
    fields["description"] = description
    return render(fields, doc.body)
