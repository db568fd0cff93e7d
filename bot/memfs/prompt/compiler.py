"""The agent's compiled system prompt, cached on (HEAD sha, sha256 of the system prompt).

The agent asks for its prompt on every model call, so a cache hit must cost next to
nothing: it reads HEAD from the ref files (`refs.resolve`) and compares, without starting a
process or opening the repository. A miss reads the commit's files in-process through
pygit2 (or, for a process that compiles once and exits, through the git command:
bot/memfs/store/git_command.py), only those the prompt shows (a tree cut by its limits leaves the
rest unread) and only blobs it has not parsed before, so a commit that changes one file costs
one parse. Only committed HEAD is compiled; the working tree is never read.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from bot.config import CONFIG_PATH, DEFAULT_POLICY, Limits, PolicyError, parse_policy
from bot.errors import MemrepoError
from bot.memfs import texts
from bot.memfs.format import layout as layouts
from bot.memfs.prompt.compile import (
    DEFAULT_MEMORY_DIR,
    NO_CONTENT,
    Entry,
    SharedView,
    compile_prompt,
    needs_content,
    read_document,
    render_memory,
)
from bot.memfs.store import refs

if TYPE_CHECKING:
    from bot.memfs.shared.record import Attachment


class Snapshot(Protocol):
    """What the compiler reads of a repository (MemoryRepo is one)."""

    root: Path

    @property
    def git_dir(self) -> str: ...

    def resolve(self, rev: str) -> str | None: ...

    def paths(self, rev: str) -> dict[str, str]: ...

    def blob(self, oid: str) -> bytes: ...

    def read(self, path: str, rev: str = "HEAD") -> bytes | None: ...


@dataclass(frozen=True)
class CompiledPrompt:
    text: str
    head_sha: str
    cache_hit: bool


class PromptCompiler:
    """Compiles one memory repository's prompt and remembers the last result.

    `limits` overrides the repository's policy (tests, benchmarks); by default the limits
    come from `.memrepo/config.yml` at the compiled commit. A policy that does not parse
    falls back to the default limits: validation reports it, and the agent keeps its memory
    meanwhile. Safe to share between threads (misses are serialised).
    """

    def __init__(self, root: str | os.PathLike[str], *, memory_dir: str = DEFAULT_MEMORY_DIR,
                 limits: Limits | None = None, repo: Snapshot | None = None) -> None:
        self.root = repo.root if repo is not None else Path(root).expanduser().resolve()
        self.memory_dir = memory_dir
        self._limits = limits
        self._repo = repo
        self._lock = threading.Lock()
        self._hit: tuple[tuple[str | bytes, ...], CompiledPrompt] | None = None
        self._memory: tuple[tuple[str | bytes, ...], str] | None = None  # (head shas, memory block)
        self._attached: tuple[str, tuple[tuple[Attachment, Path], ...]] | None = None
        self._shared_entries: dict[str, Entry] = {}  # blob id -> Entry, of the projections' files
        self._entries: dict[str, Entry] = {}  # blob id -> what the prompt needs of it
        self._policy: tuple[str | None, Limits] = (None, DEFAULT_POLICY.limits)

    def compile(self, system_prompt: str = "") -> CompiledPrompt:
        """The prompt for committed HEAD and each attached shared memory's HEAD; `cache_hit`
        says whether it was reused."""
        head = refs.resolve(self.root)
        key = (head or "", *self._shared_heads(head or ""),
               hashlib.sha256(system_prompt.encode("utf-8", "surrogatepass")).digest())
        hit = self._hit
        if hit is not None and hit[0] == key:
            return hit[1]
        with self._lock:
            return self._compile(key, system_prompt)

    def projection_heads(self) -> dict[str, str]:
        """Where each shared memory attached at the last compiled HEAD is projected -> the commit
        its projection was at ("" where there is none): what a caller keeps to tell, from the ref
        files alone, that the prompt is still the one it showed (Claude Code's prompt hook)."""
        attached = self._attached
        if attached is None:
            return {}
        return {str(root): refs.resolve(root) or "" for _, root in attached[1]}

    def _shared_heads(self, head: str) -> tuple[str, ...]:
        """The HEAD of each projection the record at `head` lists ("" where there is none): part
        of the cache key, read from the ref files like the memory's own HEAD. The record is read
        again only when the memory's HEAD moved, since it is in that commit."""
        attached = self._attached
        if attached is None or attached[0] != head:
            attached = self._attached = (head, self._attachments(head))
        return tuple(refs.resolve(root) or "" for _, root in attached[1])

    def _attachments(self, head: str) -> tuple[tuple[Attachment, Path], ...]:
        from bot.memfs.shared.record import RECORD_PATH, listing_key, parse_record, projection_root

        if not head:
            return ()
        repo = self._open()
        data = repo.read(RECORD_PATH, head) if repo.resolve(head) is not None else None
        try:
            found = parse_record(None if data is None else data.decode("utf-8", "replace"))
        except MemrepoError:  # validation reports a broken record; the agent keeps its own memory
            return ()
        # in the order Letta Code lists attached repositories, whatever order they were attached in
        return tuple((a, projection_root(self.root, a.name)) for a in sorted(found, key=lambda a: listing_key(a.name)))

    def _open(self) -> Snapshot:
        if self._repo is None:
            from bot.memfs.store.repo import MemoryRepo

            self._repo = MemoryRepo.open(self.root)  # raises the standard errors
        return self._repo

    def _compile(self, key: tuple[str | bytes, ...], system_prompt: str) -> CompiledPrompt:
        head = str(key[0])
        state = key[:-1]
        if self._memory is None or self._memory[0] != state:
            self._memory = (state, self._memory_block(head))
        text = compile_prompt(system_prompt, self._memory[1])
        self._hit = (key, CompiledPrompt(text, head, cache_hit=True))
        return CompiledPrompt(text, head, cache_hit=False)

    def _memory_block(self, head: str) -> str:
        self._open()
        assert self._repo is not None
        if not head or self._repo.resolve(head) is None:
            raise MemrepoError(texts.REPO_NO_COMMITS.format(path=self.root))
        blobs = self._repo.paths(head)
        layout = layouts.detect(layouts.INDEX in blobs,
                                layouts.letta_policy(self._repo.git_dir) if layouts.INDEX in blobs else None)
        entries = _Entries(blobs, self._repo.blob, self._entries, layout)
        limits = self._limits or self._read_limits(blobs.get(CONFIG_PATH))
        memory = render_memory(entries, limits, self.memory_dir, layout, self._shared_views(head))
        self._entries = entries.seen  # this commit's blobs only: the cache cannot grow for ever
        return memory

    def _shared_views(self, head: str) -> list[SharedView]:
        """Each attachment's tree at its projection's HEAD, its files' descriptions read once per blob."""
        from bot.memfs.shared.record import projection_label
        from bot.memfs.store.git_command import CommandSnapshot

        attached = self._attached[1] if self._attached is not None and self._attached[0] == head else ()
        seen: dict[str, Entry] = {}
        views = []
        for attachment, root in attached:
            label = projection_label(self.memory_dir, self.root, attachment.name)
            entries = None
            projected = refs.resolve(root)
            if projected:
                with contextlib.suppress(MemrepoError):
                    # read as the memory is: through the git command where the memory is (a hook,
                    # which loads no libgit2), else in process
                    if isinstance(self._repo, CommandSnapshot):
                        projection: Snapshot = CommandSnapshot(root)
                    else:
                        from bot.memfs.store.repo import MemoryRepo

                        projection = MemoryRepo.open(root)
                    found = _Entries(projection.paths(projected), projection.blob, self._shared_entries)
                    entries = {path: found[path] for path in found}
                    seen.update(found.seen)
            views.append(SharedView(attachment.name, label, attachment.url, attachment.read_only, entries))
        self._shared_entries = seen
        return views

    def _read_limits(self, blob: str | None) -> Limits:
        if self._policy[0] == blob:
            return self._policy[1]
        limits = DEFAULT_POLICY.limits
        if blob is not None:
            with contextlib.suppress(PolicyError):
                limits = parse_policy(self._repo.blob(blob).decode("utf-8", "replace")).limits
        self._policy = (blob, limits)
        return limits


class _Entries(Mapping[str, Entry]):
    """path -> Entry for one commit, reading and parsing a blob only when the prompt shows
    it (the files a tree cut by its limits leaves out are never read), and each blob once:
    from `known` (the previous commit's) or by reading it."""

    def __init__(self, blobs: dict[str, str], read: Callable[[str], bytes],
                 known: dict[str, Entry], layout: str = layouts.V1) -> None:
        self.blobs = blobs
        self.read = read
        self.known = known
        self.layout = layout
        self.seen: dict[str, Entry] = {}

    def __contains__(self, path: object) -> bool:
        return path in self.blobs  # without reading the blob, as Mapping's would

    def keys(self):  # type: ignore[override]  # the commit's paths, for the v2 index checks
        return self.blobs.keys()

    def __getitem__(self, path: str) -> Entry:
        blob = self.blobs[path]
        if not needs_content(path, self.layout, self.blobs):
            return NO_CONTENT
        entry = self.seen.get(blob) or self.known.get(blob)
        if entry is None:
            entry = read_document(self.read(blob))
        self.seen[blob] = entry
        return entry

    def __iter__(self) -> Iterator[str]:
        return iter(self.blobs)

    def __len__(self) -> int:
        return len(self.blobs)
