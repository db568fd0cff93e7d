"""The rules of shared memory, as pure functions over plain data (no git, no forge).

- the record: `.memrepo/shared.yml` in the agent's memory lists its attachments (name, URL
  without credentials, read-only or not); it is a rule file, so a harness's commit that
  changes it is a person's decision (bot/config.py `RULE_FILES`);
- a name is a folder name Letta Code accepts for a shared memory (`validateAgentRepositoryName`
  in its bundle: 1-64 of `[A-Za-z0-9._-]`, not `.` or `..`, `memory` reserved);
- attaching refuses a name in use and a repository attached already (one URL, whatever its
  credentials, host case, trailing slash or `.git`);
- a projection root: Letta Code mounts a shared memory at `$MEMORY_DIR/../<name>`, beside the
  agent's `memory` folder in `~/.letta/agents/<id>/`, and so does memrepo for a memory in that
  place. Anywhere else a memrepo clone sits among a person's own folders (a project, the home
  folder), where `../<name>` could be anything; memrepo's default is therefore
  `<memory>.shared/<name>` beside the clone: one folder per memory holds all its projections,
  apart from the person's folders and from another memory's;
- an address: the memory tool reads and writes `shared/<NAME>/<path>`, where NAME is attached
  (otherwise the path is the agent's own).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import yaml

from bot.config import SHARED_PATH, load_yaml
from bot.errors import MemrepoError

RECORD_COMMENT = "# Shared memories attached to this agent: memrepo shared attach / detach change this file.\n"
RECORD_BAD_ENTRY = "attached[{number}] must hold exactly name, url and read_only (a text, a text, true or false)"
NAME_BAD = ("{name!r} is not a valid folder name for a shared memory: use 1 to 64 letters, digits, dots, "
            "underscores and hyphens, not . or .., and not `memory` (reserved, as in Letta Code)")
NAME_USED = "a shared memory named {name} is already attached ({url}); detach it first or attach with --as OTHER"
URL_USED = "{url} is already attached as {name}; a memory attaches one repository once"
CROSSES = "one call cannot move a file between memories ({first} and {second}): read one and write the other"

RECORD_PATH = SHARED_PATH
ADDRESS_ROOT = "shared"
VERSION = 1
NAME_MAX = 64
_NAME = re.compile(r"[A-Za-z0-9._-]+")
RESERVED = "memory"
LETTA_PLACE = (".letta", "agents")  # ~/.letta/agents/<agent-id>/memory
SHARED_SUFFIX = ".shared"


@dataclass(frozen=True)
class Attachment:
    name: str
    url: str  # without credentials
    read_only: bool = False


def name_problem(name: str) -> str | None:
    """Why `name` cannot name a shared memory (None: it can)."""
    if not name:
        return "a shared memory's name cannot be empty"
    if (name in (".", "..") or name.lower() == RESERVED or len(name) > NAME_MAX
            or _NAME.fullmatch(name) is None):
        return NAME_BAD.format(name=name)
    return None


def without_credentials(url: str) -> str:
    """`url` with any user and password taken out (what the record keeps and messages show)."""
    parts = urlsplit(url)
    if not parts.scheme or parts.hostname is None or "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def url_key(url: str) -> str:
    """What two URLs of one repository share: no credentials, the host in lower case, no
    trailing slash or `.git`."""
    parts = urlsplit(url.strip())
    if parts.scheme and parts.hostname:
        url = f"{parts.scheme}://{parts.hostname.lower()}{f':{parts.port}' if parts.port else ''}{parts.path}"
    return url.rstrip("/").removesuffix(".git").rstrip("/")


def default_name(url: str) -> str:
    """The name an attachment gets without `--as`: the repository's name."""
    return url_key(url).rsplit("/", 1)[-1].rsplit(":", 1)[-1]


def attach_problem(attached: Sequence[Attachment], name: str, url: str, own_url: str | None = None) -> str | None:
    """Why `url` cannot be attached as `name` next to `attached` (None: it can)."""
    problem = name_problem(name)
    if problem is not None:
        return problem
    shown = without_credentials(url)
    if own_url is not None and url_key(own_url) == url_key(url):
        return f"{shown} is this agent's own memory repository; attach another memory"
    for other in attached:
        if other.name.lower() == name.lower():
            return NAME_USED.format(name=other.name, url=other.url)
        if url_key(other.url) == url_key(url):
            return URL_USED.format(url=shown, name=other.name)
    return None


def projection_root(memory_root: Path, name: str) -> Path:
    """Where the attachment `name` of the memory at `memory_root` is checked out (see the
    module docstring for why)."""
    parent = memory_root.parent
    if memory_root.name == RESERVED and (parent.parent.parent.name, parent.parent.name) == LETTA_PLACE:
        return parent / name
    return parent / f"{memory_root.name}{SHARED_SUFFIX}" / name


def projection_label(memory_dir: str, memory_root: Path, name: str) -> str:
    """The projection root as the prompt names it, relative to the memory's own root
    (`$MEMORY_DIR/../team` as Letta Code's, `$MEMORY_DIR/../memory.shared/team` otherwise)."""
    where = projection_root(memory_root, name)
    relative = where.relative_to(memory_root.parent)
    return f"{memory_dir.rstrip('/')}/../{relative.as_posix()}"


# The order Letta Code lists attached repositories in (`localeCompare`, the Unicode root
# collation, for names of [A-Za-z0-9._-]): punctuation first (_ - .), then digits, then letters
# whatever their case; only then does case count, small letters first.
_COLLATION = {c: i for i, c in enumerate("_-." + "0123456789" + "abcdefghijklmnopqrstuvwxyz")}


def listing_key(name: str) -> tuple[tuple[int, ...], tuple[bool, ...]]:
    """Sort key that lists shared memories by name as Letta Code's harness does."""
    return tuple(_COLLATION.get(c.lower(), len(_COLLATION) + ord(c)) for c in name), tuple(c.isupper() for c in name)


def address(path: str, names: Collection[str]) -> tuple[str, str] | None:
    """(name, path inside it) when `path` is `shared/<NAME>/<path>` (or `shared/<NAME>`) and
    NAME is attached; None when the path is the agent's own."""
    head, _, rest = path.partition("/")
    if head != ADDRESS_ROOT or not rest:
        return None
    name, _, inner = rest.partition("/")
    return (name, inner) if name in names else None


PATH_ARGS = ("path", "old_path", "new_path")  # a memory tool call's arguments that name files


def split_args(args: Mapping[str, Any], names: Collection[str]) -> tuple[str, dict[str, Any]] | None:
    """(name, the arguments with their paths inside that shared memory) when a memory tool
    call's arguments address one attached shared memory; None when they address the agent's
    own memory; MemrepoError when their paths are in two memories. Every writer (the memory
    tool, a dream) decides by it which memory a call belongs to."""
    where: dict[str, tuple[str, str] | None] = {}
    for key in PATH_ARGS:
        value = args.get(key)
        if isinstance(value, str) and value:
            where[key] = address(value, names)
    found = {None if target is None else target[0] for target in where.values()}
    if not found or found == {None}:
        return None
    if len(found) > 1:
        first, second = sorted("own memory" if f is None else f"{ADDRESS_ROOT}/{f}" for f in found)[:2]
        raise MemrepoError(CROSSES.format(first=first, second=second))
    name = next(iter(found))
    assert name is not None
    inner = dict(args)
    for key, target in where.items():
        assert target is not None
        inner[key] = target[1]
    return name, inner


def addressed(path: str, name: str) -> str:
    """The path inside shared memory `name` as the agent addresses it."""
    return f"{ADDRESS_ROOT}/{name}/{path}" if path else f"{ADDRESS_ROOT}/{name}"


# ------------------------------------------------------------------------------ the record
def parse_record(text: str | None) -> tuple[Attachment, ...]:
    """The attachments the record lists (none when there is no record); MemrepoError naming
    the first thing wrong with it."""
    if text is None or not text.strip():
        return ()
    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise MemrepoError(f"{RECORD_PATH} is not valid YAML: {problem}") from None
    if not isinstance(data, dict) or set(data) != {"version", "attached"} or not isinstance(data["attached"], list):
        raise _bad("the file must hold `version: 1` and an `attached` list")
    if isinstance(data["version"], bool) or data["version"] != VERSION:
        raise _bad("version must be 1")
    found: list[Attachment] = []
    for number, raw in enumerate(data["attached"], 1):
        if (not isinstance(raw, dict) or set(raw) != {"name", "url", "read_only"}
                or not isinstance(raw["name"], str) or not isinstance(raw["url"], str)
                or not isinstance(raw["read_only"], bool)):
            raise _bad(RECORD_BAD_ENTRY.format(number=number))
        problem = name_problem(raw["name"])
        if problem is not None:
            raise _bad(problem)
        for other in found:
            if other.name.lower() == raw["name"].lower() or url_key(other.url) == url_key(raw["url"]):
                raise _bad(f"attached[{number}] repeats {other.name}")
        found.append(Attachment(raw["name"], without_credentials(raw["url"]), raw["read_only"]))
    return tuple(found)


def render_record(attachments: Sequence[Attachment]) -> str:
    """The record's text; `parse_record` reads it back."""
    data = {"version": VERSION, "attached": [{"name": a.name, "url": without_credentials(a.url),
                                              "read_only": a.read_only} for a in attachments]}
    return RECORD_COMMENT + yaml.safe_dump(data, sort_keys=False, default_flow_style=False)


def _bad(problem: str) -> MemrepoError:
    return MemrepoError(f"{RECORD_PATH}: {problem}")
