"""The parts of git's wire protocol v2 that localhub answers itself: pkt-line framing, a
request's command and arguments, and `ls-refs` (what every fetch asks first, and all that a
fetch asks when nothing is new). Answering it from the object store instead of starting
`git upload-pack` matters because every agent fetches whenever `main` moves.

`ls-refs` follows git's own upload-pack (protocol-v2.txt): HEAD first, then every ref under
`refs/` in name order, only those under a requested `ref-prefix`; `symrefs` adds
`symref-target:`, `peel` adds `peeled:` for annotated tags, and `unborn` (with `symrefs`)
reports an unborn HEAD.
"""

from __future__ import annotations

import pygit2

FLUSH = b"0000"


class ProtocolError(ValueError):
    """A request that is not well-formed pkt-lines."""


def pkt_line(text: str) -> bytes:
    data = text.encode()
    return f"{len(data) + 4:04x}".encode() + data


def pkt_lines(data: bytes) -> list[str | None]:
    """The lines of a pkt-line stream; None for a flush, delim or response-end packet."""
    lines: list[str | None] = []
    at = 0
    while at < len(data):
        try:
            size = int(data[at:at + 4], 16)
        except ValueError as exc:
            raise ProtocolError("bad pkt-line length") from exc
        if size < 4:
            lines.append(None)
            at += 4
            continue
        if at + size > len(data):
            raise ProtocolError("truncated pkt-line")
        lines.append(data[at + 4:at + size].decode("utf-8", "replace").removesuffix("\n"))
        at += size
    return lines


def parse_command(body: bytes) -> tuple[str | None, list[str]]:
    """(command, arguments) of a v2 request: `command=X`, capability lines, a delim, then the
    arguments up to the flush. (None, []) when it is not one (git itself then answers)."""
    try:
        lines = pkt_lines(body)
    except ProtocolError:
        return None, []
    if not lines or lines[0] is None or not lines[0].startswith("command="):
        return None, []
    command = lines[0].removeprefix("command=")
    try:
        split = lines.index(None)
    except ValueError:
        return command, []
    arguments = []
    for line in lines[split + 1:]:
        if line is None:
            break
        arguments.append(line)
    return command, arguments


def receive_commands(body: bytes) -> tuple[list[tuple[str, str, str]], set[str]]:
    """The ref updates a receive-pack request asks for, (old, new, ref) each, and the
    capabilities its first line names; the pack after the flush is not read."""
    commands: list[tuple[str, str, str]] = []
    capabilities: set[str] = set()
    at = 0
    while at + 4 <= len(body):
        try:
            size = int(body[at:at + 4], 16)
        except ValueError as exc:
            raise ProtocolError("bad pkt-line length") from exc
        if size < 4:
            break
        line = body[at + 4:at + size].decode("utf-8", "replace").removesuffix("\n")
        at += size
        line, _, caps = line.partition("\0")
        capabilities |= set(caps.split())
        parts = line.split(" ")
        if len(parts) == 3:
            commands.append((parts[0], parts[1], parts[2]))
    return commands, capabilities


def refused_push(refs: list[str], reason: str, messages: list[str], capabilities: set[str]) -> bytes:
    """receive-pack's answer refusing every ref (`ng <ref> <reason>`, git's report-status),
    with `messages` on the progress band when the client asked for side-band, as a
    pre-receive hook's refusal is answered."""
    report = pkt_line("unpack ok\n") + b"".join(pkt_line(f"ng {ref} {reason}\n") for ref in refs) + FLUSH
    if "report-status" not in capabilities and "report-status-v2" not in capabilities:
        report = b""
    if not ({"side-band-64k", "side-band"} & capabilities):
        return report
    out = b"".join(_band(2, f"{text}\n".encode()) for text in messages)
    if report:
        out += _band(1, report)
    return out + FLUSH


def _band(number: int, data: bytes) -> bytes:
    return f"{len(data) + 5:04x}".encode() + bytes([number]) + data


def ls_refs(git: pygit2.Repository, arguments: list[str]) -> bytes:
    """The `ls-refs` answer for the repository."""
    symrefs, peel, unborn = "symrefs" in arguments, "peel" in arguments, "unborn" in arguments
    prefixes = [a.removeprefix("ref-prefix ") for a in arguments if a.startswith("ref-prefix ")]

    def wanted(name: str) -> bool:
        return not prefixes or any(name.startswith(p) for p in prefixes)

    out: list[bytes] = []

    def line(name: str, ref: pygit2.Reference) -> None:
        try:
            target = ref.resolve()
        except (KeyError, pygit2.GitError):
            return
        text = f"{target.target} {name}"
        if symrefs and ref.type == pygit2.enums.ReferenceType.SYMBOLIC:
            text += f" symref-target:{ref.target}"
        obj = git.get(target.target)
        if peel and isinstance(obj, pygit2.Tag):
            while isinstance(obj, pygit2.Tag):  # a tag of a tag: down to what is not a tag
                obj = git.get(obj.target)
            text += f" peeled:{obj.id}"
        out.append(pkt_line(text + "\n"))

    if wanted("HEAD"):
        head = git.references.get("HEAD")
        if head is not None:
            if git.head_is_unborn:
                if unborn and symrefs:  # git says it only with the target, the point of saying it
                    out.append(pkt_line(f"unborn HEAD symref-target:{head.target}\n"))
            else:
                line("HEAD", head)
    for name in sorted(n for n in git.references if n.startswith("refs/")):
        if wanted(name):
            line(name, git.references[name])
    return b"".join(out) + FLUSH
