"""Commit trailers, read the way git reads them, and the external sources they name (pure).

An edit or a dream made from content outside the conversation (a web page, an e-mail, a
fetched document) carries one `Source: external:<uri>` trailer per such source in its commit.
The integrator reads those trailers from the commits a pull request brings, so the need for a
person's approval travels with the commits themselves: it is there from the first moment the
pull request exists, and removing a label does not remove it.

`parse_trailers` follows git's own rules (trailer.c, as `git interpret-trailers --parse
--no-divider` and `git log --format=%(trailers)` apply them):
- the trailer block is the last paragraph of the message, never the first (the title);
  trailing blank lines, trailing comment lines (`#`) and a trailing `Conflicts:` block are
  ignored first;
- a trailer line is `<token><optional spaces>:<value>`, the token made of ASCII letters,
  digits and `-`; a line starting with whitespace continues the trailer before it;
- the block counts when all its lines are trailers, or when it holds a git-generated one
  (`Signed-off-by: `, `(cherry picked from commit `) and at least a quarter of its lines
  are trailers; lines starting with `#` inside it are skipped;
- token and value are trimmed, and a folded value is unfolded to one line.

One deliberate difference: git also stops reading a message at a scissors line
(`# ------------------------ >8 ------------------------`) and, in `interpret-trailers`
without `--no-divider`, at a line starting with `---`. Text written before the trailers may
come from the very content that is not trusted; were such a line in it, git would not see
the trailers after it. Here nothing before the last paragraph can hide it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from bot.contracts import EXTERNAL_PREFIX, PROVENANCE_TRAILERS, SOURCE

COMMENT = "#"
TOOL_PREFIX = "tool:"
GIT_GENERATED = ("Signed-off-by: ", "(cherry picked from commit ")  # not said: git's own trailer lines, matched
_SPACE = " \t\n\v\f\r"  # C's isspace, which git uses; Python's str.isspace knows more
_TOKEN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")


def _blank(line: str) -> bool:
    return all(c in _SPACE for c in line)


def _separator(line: str) -> int:
    """Where the `:` after a token is (git's find_separator), or -1: a token of letters,
    digits and `-`, then optional spaces or tabs, then the colon."""
    spaced = False
    for i, c in enumerate(line):
        if c == ":":
            return i
        if not spaced and c in _TOKEN_CHARS:
            continue
        if i > 0 and c in " \t":
            spaced = True
            continue
        break
    return -1


def _ignored_tail(lines: list[str], ended: bool) -> int:
    """How many lines at the end are not part of the message: blank and comment lines, and
    an old-style `Conflicts:` block (git's ignored_log_message_bytes). `ended`: the last
    line ends with a newline (git looks for "Conflicts:" with its newline)."""
    start: int | None = None
    in_conflicts = False
    for i, line in enumerate(lines):
        if line.startswith(COMMENT) or line == "":
            start = i if start is None else start
        elif line == "Conflicts:" and (ended or i < len(lines) - 1):
            in_conflicts = True
            start = i if start is None else start
        elif in_conflicts and line.startswith("\t"):
            pass
        elif start is not None:
            start, in_conflicts = None, False
    return 0 if start is None else len(lines) - start


def _block(lines: list[str]) -> list[str]:
    """The lines of the trailer block (git's find_trailer_block_start), or none."""
    title_end = len(lines)
    for i, line in enumerate(lines):
        if line.startswith(COMMENT):
            continue
        if _blank(line):
            title_end = i
            break
    only_spaces, recognized = True, False
    trailers = non_trailers = continuations = 0
    for i in range(len(lines) - 1, title_end - 1, -1):
        line = lines[i]
        if line.startswith(COMMENT):
            non_trailers += continuations
            continuations = 0
            continue
        if _blank(line):
            if only_spaces:
                continue
            non_trailers += continuations
            if (recognized and trailers * 3 >= non_trailers) or (trailers and not non_trailers):
                return lines[i + 1:]
            return []
        only_spaces = False
        if line.startswith(GIT_GENERATED):
            trailers += 1
            continuations = 0
            recognized = True
        elif _separator(line) >= 1 and line[0] not in _SPACE:
            trailers += 1
            continuations = 0
        elif line[0] in _SPACE:
            continuations += 1
        else:
            non_trailers += 1 + continuations
            continuations = 0
    return []


def _unfold(value: str) -> str:
    """A value folded over several lines, as one line (git's unfold_value)."""
    out: list[str] = []
    i = 0
    while i < len(value):
        if value[i] == "\n":
            while i < len(value) and value[i] in _SPACE:
                i += 1
            out.append(" ")
            continue
        out.append(value[i])
        i += 1
    return "".join(out).strip(_SPACE)


def parse_trailers(message: str) -> tuple[tuple[str, str], ...]:
    """The (token, value) trailers of a commit message, in order (see the module docstring)."""
    lines = message.split("\n")
    ended = len(lines) > 1 and lines[-1] == ""
    if ended:
        lines.pop()  # the newline ending the last line does not start another
    lines = lines[: len(lines) - _ignored_tail(lines, ended)]
    entries: list[str] = []
    last_is_trailer = False
    for line in _block(lines):
        if last_is_trailer and line and line[0] in _SPACE:
            entries[-1] += "\n" + line
            continue
        entries.append(line)
        last_is_trailer = _separator(line) >= 1
    found = []
    for entry in entries:
        if entry.startswith(COMMENT):
            continue
        at = _separator(entry)
        if at >= 1:
            found.append((entry[:at].strip(_SPACE), _unfold(entry[at + 1:].strip(_SPACE))))
    return tuple(found)


CUT_LINE = "------------------------ >8 ------------------------"  # git's scissors, after the comment char


def commit_text(text: str) -> str:
    """Text for a commit message's body that git reads to its end: a line git would take for
    the end of the message (one starting with `---`, or a scissors line) is indented by one
    space, which ends that reading and keeps the words."""
    lines = text.split("\n")
    return "\n".join(" " + line if line.startswith("---") or line.endswith(CUT_LINE) else line for line in lines)


def with_trailers(message: str, trailers: Iterable[tuple[str, str]]) -> str:
    """`message` with `trailers` as its last paragraph, where git reads them: the message is
    made safe with `commit_text`, and a value is kept to one line."""
    block = "\n".join(f"{key}: {' '.join(str(value).split())}" for key, value in trailers)
    body = commit_text(message.strip("\n"))
    return f"{body}\n\n{block}\n" if block else f"{body}\n"


def trailer_map(message: str, keys: tuple[str, ...] = PROVENANCE_TRAILERS) -> Mapping[str, str]:
    """The last value of each of `keys` among the message's trailers (keys compared without
    case, as git's `trailers:key=` compares them)."""
    wanted = {key.casefold(): key for key in keys}
    found: dict[str, str] = {}
    for token, value in parse_trailers(message):
        key = wanted.get(token.casefold())
        if key is not None:
            found[key] = value
    return found


def untrusted_source(source: str, trusted: Iterable[str] = ()) -> str | None:
    """The `external:` form of `source` when its content is not to be trusted, else None: an
    `external:` source, or a tool's result (`tool:<name>`) that the policy's
    `trusted_sources` does not list. The agent's writes and a dream judge content alike."""
    if source.startswith(EXTERNAL_PREFIX):
        return source
    if source.startswith(TOOL_PREFIX) and source not in set(trusted):
        return EXTERNAL_PREFIX + source
    return None


def is_external(source: str) -> bool:
    return source.casefold().startswith(EXTERNAL_PREFIX)


def external_sources(messages: Iterable[str]) -> tuple[str, ...]:
    """The `external:` sources that `Source` trailers of `messages` name, each once, in the
    order first seen. Token and prefix compare without case (as git's `trailers:key=` does):
    a source spelled oddly still counts, since counting it too often only asks a person."""
    found: dict[str, None] = {}
    for message in messages:
        for token, value in parse_trailers(message):
            if token.casefold() == SOURCE.casefold() and is_external(value):
                found.setdefault(value, None)
    return tuple(found)
