"""A memory file: YAML frontmatter between two `---` lines, then a markdown body.

The parser is strict on purpose (a missing closing `---` is an error, not "no frontmatter",
a key written twice is an error, not "the last one counts"), because the validator must say
exactly what is wrong; rendering goes through python-frontmatter so files look like every
other frontmatter tool writes them. memrepo reads frontmatter only through `split` and
`parse`, so the tool, the validator, the prompt and the merge agree on what a file says; the
readings that copy Letta Code's hook and tool line for line (`letta_parse` here,
`validate.letta_frontmatter`) copy Letta's, byte-order mark and all.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any

import frontmatter
import yaml

from bot.config import DuplicateKeyError, load_yaml, yaml_problem
from bot.memfs.format.layout import V2, is_index
from bot.memfs.texts import MISSING_FRONTMATTER, UNCLOSED_FRONTMATTER

# ---------------------------------------------------------------- frontmatter (document.parse)
# Readers disagree on which value of a repeated key counts; Letta's refuses the file.
DUPLICATE_KEY = "frontmatter has the key '{key}' more than once; keep one"
TOOL_V2_KEYS = "{path}: memory frontmatter must contain exactly 'name' and 'description'"
TOOL_EMPTY_FIELD = "'{key}' must not be empty"
BAD_YAML = "frontmatter is not valid YAML: {problem}"
NOT_MAPPING = "frontmatter must be a YAML mapping of keys to values, found {kind}"

BOM = "\ufeff"


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
    """Return (frontmatter text, body) or raise DocumentError with Letta's message. A leading
    byte-order mark (Windows editors save one) does not hide the frontmatter after it: a file
    a person marked read_only stays read_only however their editor saved it."""
    lines = text.removeprefix(BOM).splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n").rstrip() != "---":
        raise DocumentError(MISSING_FRONTMATTER)
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r\n").rstrip() == "---":
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    raise DocumentError(UNCLOSED_FRONTMATTER)


def parse(text: str) -> Document:
    """Parse a memory document; the frontmatter must be a YAML mapping (or empty), or else
    lines of `key: value` as Letta Code writes them (`line_fields`). Every reader of
    frontmatter in memrepo comes here (or to `split`), so all read a file alike; a key written
    twice is an error in either reading (DuplicateKeyError), since readers disagree on
    which value counts."""
    head, body = split(text)
    try:
        data = load_yaml(head) if head.strip() else {}
    except DuplicateKeyError as exc:
        raise DuplicateKey(exc.key) from None
    except yaml.YAMLError as exc:
        fields = line_fields(head)
        if fields is None:
            raise DocumentError(BAD_YAML.format(problem=yaml_problem(exc, first_line=2))) from None
        return Document(fields, body)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise DocumentError(NOT_MAPPING.format(kind=type(data).__name__))
    return Document({str(key): value for key, value in data.items()}, body)


class DuplicateKey(DocumentError):
    """The frontmatter names a key twice."""

    def __init__(self, key: object) -> None:
        super().__init__(DUPLICATE_KEY.format(key=key))
        self.key = str(key)


def line_fields(head: str) -> dict[str, Any] | None:
    """Frontmatter that is not YAML read line by line, as Letta Code reads it: each line
    `key: value` (indented lines continue the one before and are skipped), the value as YAML
    reads it alone when that is one scalar, else (`description: Notes: tea`, which Letta's tool
    writes as it is) its text. None when a line has no `key:`; DuplicateKey when a key comes
    twice."""
    entries = _key_lines(head)
    if entries is None:
        return None
    fields: dict[str, Any] = {}
    for key, value in entries:
        if key in fields:
            raise DuplicateKey(key)
        fields[key] = value
    return fields


def _key_lines(head: str) -> list[tuple[str, Any]] | None:
    """(key, value) of each top-level `key: value` line, as `line_fields` reads it."""
    entries: list[tuple[str, Any]] = []
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
        entries.append((line[:colon].strip(), raw if isinstance(value, (dict, list)) else value))
    return entries


def read_only_values(text: str) -> list[object]:
    """Every value the frontmatter gives `read_only` (none without frontmatter or the key):
    where the key comes twice, which YAML refuses, each line's, so that a file is read_only
    when any of them is true, whichever one another reader keeps."""
    try:
        doc = parse(text)
    except DuplicateKey:
        head, _ = split(text)
        return [value for key, value in _key_lines(head) or () if key.strip("'\"") == "read_only"]
    except DocumentError:
        return []
    return [doc.frontmatter["read_only"]] if "read_only" in doc.frontmatter else []


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


# ---------------------------------------------------------------- as Letta Code's tool writes
# Letta's memory tool re-renders a file on every edit: `---`, `description: <value>` and
# `read_only: <value>` when present (v2: `name: "<json>"`, `description: "<json>"`), `---`,
# then the body with no blank line. memrepo writes the same bytes for Letta-spelled calls,
# keeping what Letta's rendering would drop (other keys such as `limit`, a description written
# over several lines) so that no edit loses a line of frontmatter.

_LETTA_DOC = re.compile(r"---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)\Z")
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
            "\u2028\u2029\u202f\u205f\u3000\ufeff"
_LINES = re.compile(r"\r?\n")


def js_trim(text: str) -> str:
    """String.prototype.trim: JavaScript's whitespace, which is not quite Python's."""
    return text.strip(_JS_SPACE)


@dataclass(frozen=True)
class LettaDoc:
    """A memory file as Letta's tool reads it: its fields (v1: description and read_only as
    written, no YAML; v2: name and description, JSON-decoded), its body, and (v1) the
    frontmatter lines Letta's rendering drops, which memrepo keeps."""

    fields: dict[str, str]
    body: str
    description_lines: tuple[str, ...] = ()  # a description written over several lines
    other_lines: tuple[str, ...] = ()
    index: bool = False  # a v2 MEMORY.md: no frontmatter, all body

    def with_body(self, body: str) -> LettaDoc:
        return replace(self, body=body)

    def with_description(self, description: str) -> LettaDoc:
        return replace(self, fields={**self.fields, "description": description}, description_lines=())


def _scalar_fields(head: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in _LINES.split(head):
        colon = line.find(":")
        if colon > 0:
            fields[js_trim(line[:colon])] = js_trim(line[colon + 1:])
    return fields


def _v2_value(value: str) -> str:
    text = js_trim(value)
    if len(text) >= 1 and text.startswith('"') and text.endswith('"'):
        try:
            parsed = json.loads(text)
        except ValueError:
            return text[1:-1]
        if isinstance(parsed, str):
            return parsed
    if len(text) >= 1 and text.startswith("'") and text.endswith("'"):
        return text[1:-1].replace("''", "'")
    return text


def _entries(head: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(description's lines when it spans several, every other key's lines): v1 frontmatter
    grouped into entries, a key's indented lines with it, blank lines dropped as Letta does."""
    entries: list[tuple[str | None, list[str]]] = []
    for line in _LINES.split(head):
        if not line.strip():
            continue
        colon = line.find(":")
        if line[0] not in " \t" and colon > 0:
            entries.append((line[:colon].strip(), [line]))
        elif entries and line[0] in " \t":
            entries[-1][1].append(line)
        else:
            entries.append((None, [line]))
    description = next((lines for key, lines in reversed(entries) if key == "description"), [])
    others = tuple(line for key, lines in entries if key not in ("description", "read_only") for line in lines)
    return (tuple(description) if len(description) > 1 else ()), others


def letta_parse(text: str, path: str, layout: str) -> LettaDoc:
    """Read a file as Letta's memory tool does, or DocumentError with its message."""
    if layout == V2 and is_index(path):
        if re.match(r"---\r?\n", text):
            raise DocumentError(f"{path}: MEMORY.md must not have frontmatter")
        return LettaDoc({}, text, index=True)
    match = _LETTA_DOC.match(text)
    if match is None:
        raise DocumentError(f"{path}: target file is missing required frontmatter")
    head, body = match.group(1), match.group(2)
    fields = _scalar_fields(head)
    if not js_trim(fields.get("description", "")):
        raise DocumentError(f"{path}: target file frontmatter is missing 'description'")
    if layout == V2:
        if not js_trim(fields.get("name", "")):
            raise DocumentError(f"{path}: target file frontmatter is missing 'name'")
        keys = [js_trim(line[:line.find(":")]) for line in _LINES.split(head) if line.find(":") > 0]
        if len(keys) != 2 or "name" not in fields or "description" not in fields:
            raise DocumentError(TOOL_V2_KEYS.format(path=path))
        name, description = _v2_value(fields["name"]), _v2_value(fields["description"])
        if not js_trim(name) or not js_trim(description):
            raise DocumentError(f"{path}: memory 'name' and 'description' must not be empty")
        return LettaDoc({"name": name, "description": description}, body)
    kept = {"description": fields["description"]}
    if "read_only" in fields:
        kept["read_only"] = fields["read_only"]
    description_lines, other_lines = _entries(head)
    return LettaDoc(kept, body, description_lines, other_lines)


def _one_line(value: str) -> str:
    return js_trim(re.sub(r"\r?\n", " ", value))


def _v1_description(value: str) -> str:
    """Letta's `description: <text>` line, unless memrepo would read that text as no text at
    all (`#1 facts` as nothing, `yes` as true, `12` as a number): then the text double-quoted,
    which memrepo and YAML read back as written. Letta writes such a value bare and memrepo
    would lose it; this is one of the deliberate differences (docs/format.md)."""
    line = f"description: {value}"
    read = try_parse(f"---\n{line}\n---\n")
    if read is not None and isinstance(read.frontmatter.get("description"), str):
        return line  # text to memrepo too (a value Letta keeps quoted, 'a: b', reads as its inside)
    return "description: " + json.dumps(value, ensure_ascii=False)


def letta_render(doc: LettaDoc, path: str, layout: str) -> str:
    """The text Letta's memory tool writes for `doc` (plus, in v1, the lines it would drop)."""
    if doc.index:
        return doc.body if doc.body.endswith("\n") or not doc.body else doc.body + "\n"
    description = js_trim(doc.fields.get("description", ""))
    if not description:
        raise DocumentError(TOOL_EMPTY_FIELD.format(key="description"))
    lines = ["---"]
    if layout == V2:
        name = js_trim(doc.fields.get("name", ""))
        if not name:
            raise DocumentError(TOOL_EMPTY_FIELD.format(key="name"))
        lines.append("name: " + json.dumps(_one_line(name), ensure_ascii=False))
        lines.append("description: " + json.dumps(_one_line(description), ensure_ascii=False))
    else:
        lines += doc.description_lines or [_v1_description(_one_line(description))]
        if "read_only" in doc.fields:
            lines.append(f"read_only: {doc.fields['read_only']}")
        lines += doc.other_lines
    lines.append("---")
    header = "\n".join(lines)
    return f"{header}\n{doc.body}" if doc.body else f"{header}\n"


def default_name(path: str) -> str:
    """The name Letta gives a new v2 file: its file name's words, each capitalised."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    if name.lower().endswith(".md"):
        name = name[:-3]
    words = [word for word in re.split(r"[-_]+", name) if word]
    return " ".join(word[0].upper() + word[1:] for word in words) or "Memory"
