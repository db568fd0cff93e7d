"""What the palace reads: one memory clone (its `main`, read through libgit2), the forge it
belongs to (its open pull requests and their reviews) and the transcript store (through
`why`). This is the imperative shell of the palace; what a page shows of it is decided by the
pure functions of `model.py`.

Everything that depends on `main` only is kept per commit of `main`, so a page is read from git
once per commit; the log is extended, not rebuilt, when `main` moves forward; a `why` answer is
kept until a commit changes its file; the forge is asked at most once every `pulls_ttl` seconds.
Nothing here writes to the clone.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pygit2

from bot.config import DEFAULT_POLICY, Limits
from bot.errors import MemrepoError
from bot.forge.errors import unreachable
from bot.identity import writer
from bot.memfs import (
    DEFAULT_MEMORY_DIR,
    Entry,
    MemoryRepo,
    at,
    compile_rules,
    entry_kind,
    file_path,
    iso,
    main_ref,
    memory_layout,
    needs_content,
    parse_when,
    read_document,
    ref_name,
    render_tree,
    shared_projection,
    shared_record,
    sync,
    validate,
)
from bot.palace import model
from bot.provenance import texts as provenance_texts

PALACE_FORGE_DISABLED = "the forge is not asked (--no-forge)"
PALACE_FORGE_FAILED = "the forge could not be asked for open pull requests ({problem}); they are not shown"
PALACE_FORGE_UNREACHABLE = ("The forge of {repository} could not be reached, so its open pull requests are not shown. "
                            "Check that it is running (for the local stack: memrepo serve --local) and that this "
                            "memory's origin names it, then reload this page.")

FORGE_RETRY = {"max_total_seconds": 8.0, "max_attempts": 2, "backoff_base": 0.2, "backoff_cap": 1.0}
PULLS_TTL = 20.0  # seconds an answer of the forge is shown before it is asked again
WHY_CACHE = 4096  # answers of `why` kept (one per line asked about)
TOUCH_CACHE = 64  # paths whose commits the log keeps
CHANGED_CACHE = 20_000  # commits whose changed paths the log keeps (a commit's never change)
REUSE_WALK = 500  # commits walked to tell whether a kept answer still holds
DIFF_FILES = 20  # files of /at shown with their diff; the others are named
MEMO_CACHE = 512  # rendered parts of pages kept (their keys carry main's commit)


class _Lru(OrderedDict):
    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def put(self, key: Any, value: Any) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)


def _entry_id(tree: pygit2.Tree, path: str) -> str | None:
    try:
        return str(tree[path].id)
    except KeyError:
        return None


def _text(data: bytes) -> str | None:
    text, _ = validate.decode(data)
    return text


def _commit_row(commit: pygit2.Commit) -> dict[str, Any]:
    message = commit.message
    return {"sha": str(commit.id), "time": commit.commit_time, "when": iso(commit.commit_time),
            "author": commit.author.name, "email": commit.author.email,
            "role": writer(commit.author.email, commit.committer.email, message),
            "summary": message.split("\n", 1)[0], "merge": len(commit.parent_ids) > 1}


class _Blob:
    """What the palace needs of one blob: its characters (bytes when it is not UTF-8 text), its
    text, and what the prompt shows of it (parsed once, when first needed)."""

    __slots__ = ("_entry", "chars", "data", "read", "text")

    def __init__(self, chars: int, text: str | None, data: bytes | None, read: bool) -> None:
        self.chars, self.text, self.data, self.read = chars, text, data, read
        self._entry: Entry | None = None

    @classmethod
    def of(cls, blob: pygit2.Blob, read: bool) -> _Blob:
        if not read:
            return cls(blob.size, None, None, False)
        data = blob.data
        text = _text(data)
        return cls(len(text) if text is not None else len(data), text, data, True)

    def entry(self) -> Entry:
        if self._entry is None:
            self._entry = read_document(self.data or b"")
        return self._entry


class Forge:
    """The forge of one memory: its open pull requests with their reviews, asked at most once
    every `ttl` seconds (a failure too, so a forge that is down is not asked on every page).
    `forge`: None finds it from origin's URL and MEMREPO_FORGE_TOKEN / GITHUB_TOKEN / the URL's
    token, as `why` and dreams do; False never asks; or any object with ForgeClient's
    `list_open_pull_requests()` and `list_reviews(number)`."""

    def __init__(self, repo: MemoryRepo, forge: Any = None, *, ttl: float = PULLS_TTL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.repo = repo
        self._arg = forge
        self.ttl = ttl
        self.clock = clock
        self._lock = threading.Lock()
        self._client: Any = None
        self._status: dict[str, Any] | None = None
        self._owned = False
        self._answer: tuple[float, dict[str, Any]] | None = None

    def client(self) -> Any:
        """The client to ask (or None; `status()["reason"]` says why there is none)."""
        if self._status is None:
            self._client, self._status = self._find()
        return self._client

    def status(self) -> dict[str, Any]:
        self.client()
        assert self._status is not None
        return self._status

    def _find(self) -> tuple[Any, dict[str, Any]]:
        from bot.forge.retry import RetryPolicy
        from bot.provenance.sources import find_forge, unasked

        client, status, self._owned = find_forge(self.repo, self._arg, disabled=unasked(PALACE_FORGE_DISABLED),
                                                 policy=RetryPolicy(**FORGE_RETRY))
        return client, status

    def pending(self) -> dict[str, Any]:
        """{"asked", "repository", "reason", "error", "pulls": [...], "reviews": {number: [...]}}."""
        with self._lock:
            now = self.clock()
            if self._answer is not None and now - self._answer[0] < self.ttl:
                return self._answer[1]
            answer = self._ask()
            self._answer = (now, answer)
            return answer

    def forget(self) -> None:
        """Ask again on the next page (main moved: a pull request may have been merged)."""
        with self._lock:
            self._answer = None

    def _ask(self) -> dict[str, Any]:
        client = self.client()
        out: dict[str, Any] = {**self.status(), "error": None, "pulls": [], "reviews": {}}
        if client is None:
            return out
        try:
            pulls = client.list_open_pull_requests()
            for pr in pulls:
                out["pulls"].append({"number": pr.number, "url": pr.url or None, "title": pr.title,
                                     "author": pr.author or None, "labels": list(pr.labels),
                                     "head_ref": pr.head_ref, "draft": pr.draft})
                if model.pull_kind(pr.labels, pr.head_ref) is not None:
                    out["reviews"][pr.number] = [
                        {"reviewer": r.author, "state": r.state, "submitted_at": r.submitted_at}
                        for r in client.list_reviews(pr.number)]
        except MemrepoError as exc:
            repository = out.get("repository") or self.repo.root.name
            out["error"] = (PALACE_FORGE_UNREACHABLE.format(repository=repository) if unreachable(exc)
                            else PALACE_FORGE_FAILED.format(problem=exc))
        return out

    def close(self) -> None:
        if self._owned and self._client is not None:
            with contextlib.suppress(Exception):
                self._client.close()


class Palace:
    """One memory as the palace shows it. `forge` as `Forge` takes it; `transcripts`: None
    opens the TranscriptStore of `home` (or the usual home) when a line needs it, False never
    reads one, or a TranscriptStore. Raises the standard MemrepoError when `root` is not a
    memory clone. Safe to share between threads."""

    def __init__(self, root: str | os.PathLike[str], *, forge: Any = None, transcripts: Any = None,
                 home: str | os.PathLike[str] | None = None, pulls_ttl: float = PULLS_TTL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        first = MemoryRepo.open(root)
        self.root: Path = first.root
        self._local = threading.local()
        self._local.repo = first
        self._lock = threading.Lock()
        self._reading = threading.Lock()
        self.forge = Forge(first, forge, ttl=pulls_ttl, clock=clock)
        self._transcripts_arg = transcripts
        self._home = home
        self._store: Any = None
        self._blobs: dict[str, _Blob] = {}
        self._blocks: dict[tuple[str, str, int], dict[str, Any]] = {}
        self._tree: tuple[Any, dict[str, Any]] | None = None
        self._overview: tuple[str, dict[str, Any]] | None = None
        self._rows: tuple[str, list[dict[str, Any]], Counter[tuple[int, str]]] | None = None
        self._touching: _Lru = _Lru(TOUCH_CACHE)
        self._changed: _Lru = _Lru(CHANGED_CACHE)
        self._why: _Lru = _Lru(WHY_CACHE)
        self._seen_head: str | None = None
        self._memo: _Lru = _Lru(MEMO_CACHE)

    # ------------------------------------------------------------------ plumbing
    def repo(self) -> MemoryRepo:
        """This thread's handle on the clone (libgit2 objects are not shared between threads)."""
        repo = getattr(self._local, "repo", None)
        if repo is None:
            repo = self._local.repo = MemoryRepo.open(self.root)
        return repo

    def head(self) -> str:
        """main's commit now (read from the ref files)."""
        head = main_ref(self.repo())[1]
        if head != self._seen_head:
            if self._seen_head is not None:
                self.forge.forget()
            self._seen_head = head
        return head

    def name(self) -> str:
        """What pages call this memory: its forge repository (owner/name), else its folder."""
        return self.forge.status().get("repository") or self.root.name

    def transcripts(self) -> Any:
        if self._transcripts_arg is not None:
            return self._transcripts_arg
        if self._store is None:
            from bot.transcript.store import TranscriptStore

            try:
                self._store = TranscriptStore(self._home)
            except MemrepoError:
                return None  # why says why it cannot read one
        return self._store

    def close(self) -> None:
        self.forge.close()
        if self._store is not None:
            with contextlib.suppress(Exception):
                self._store.close()

    def _limits(self, repo: MemoryRepo, head: str) -> tuple[Limits, str | None]:
        try:
            return repo.policy(head).limits, None
        except MemrepoError as exc:
            return DEFAULT_POLICY.limits, str(exc)

    def memo(self, key: Any, make: Callable[[], Any]) -> Any:
        """`make()`, kept under `key` (which carries main's commit): what a page renders of
        memory at one commit does not change."""
        with self._lock:
            found = self._memo.get(key)
        if found is None:
            found = make()
            with self._lock:
                self._memo.put(key, found)
        return found

    def commit(self, sha: str) -> dict[str, Any]:
        return _commit_row(self.repo().git[sha].peel(pygit2.Commit))

    # ------------------------------------------------------------------ /
    def overview(self) -> dict[str, Any]:
        """What / shows: the compiled core blocks, the external tree, sizes against the limits
        (kept per commit of main) and what is pending (read on every page)."""
        head = self.head()
        kept = self._overview
        if kept is None or kept[0] != head:
            with self._reading:  # one reader at a time: it carries what it can over from the last commit
                kept = self._overview
                if kept is None or kept[0] != head:
                    kept = (head, self._read_overview(head))
                    self._overview = kept
        return {**kept[1], "pending": self.pending(head)}

    def _read_overview(self, head: str) -> dict[str, Any]:
        repo = self.repo()
        blobs = repo.paths(head)
        limits, policy_problem = self._limits(repo, head)
        seen: dict[str, _Blob] = {}
        core: dict[str, str | None] = {}
        entries: dict[str, Entry] = {}
        external: dict[str, tuple[str, int]] = {}
        skills: list[dict[str, Any]] = []
        documents: dict[str, int] = {}
        core_chars = 0
        shape = memory_layout(repo, head)  # v1 or v2: which files are core memory
        for path, blob in blobs.items():
            where = entry_kind(path, shape, blobs)
            content = needs_content(path, shape, blobs)
            wanted = content or validate.is_memory_document(path)
            known = seen.get(blob) or self._blobs.get(blob)
            if known is None or (wanted and not known.read):
                known = _Blob.of(repo.git[blob], wanted)
            seen[blob] = known
            entry = known.entry() if content else compile_rules.NO_CONTENT
            entries[path] = entry
            if validate.is_memory_document(path):
                documents[path] = known.chars
            if where == compile_rules.CORE:
                core[path] = known.text
                core_chars += known.chars
            elif where == compile_rules.EXTERNAL:
                external[path] = (entry.description, known.chars)
            elif where == compile_rules.SKILL:
                skills.append({"path": path, "description": entry.description, "chars": known.chars})
        self._blobs = seen  # this commit's blobs only: the cache cannot grow for ever
        kept_blocks = self._blocks
        self._blocks = {}
        for path in sorted(core, key=model.core_key):
            key = (path, blobs[path], limits.file_chars)
            block = kept_blocks.get(key) or {**model.core_block(path, core[path], entries[path], limits.file_chars),
                                             "blob": blobs[path]}
            self._blocks[key] = block
        blocks = list(self._blocks.values())
        listing = (hash(tuple(sorted(external.items()))), limits)
        if self._tree is None or self._tree[0] != listing:
            prompt_tree = render_tree(list(external), entries, limits, DEFAULT_MEMORY_DIR.rstrip("/"))
            tree = model.tree_view(external, prompt_tree, limits)
            tree["key"] = listing
            self._tree = (listing, tree)
        tree = self._tree[1]
        depth = max((validate.system_depth(p) for p in core), default=0)
        over = [{"path": p, **model.measure(n, limits.file_chars)} for p, n in sorted(documents.items())
                if model.level(n, limits.file_chars) != "ok"]
        return {
            "head": head, "commit": self.commit(head), "ref": ref_name(main_ref(repo)[0]),
            "limits": limits, "policy_problem": policy_problem, "blocks": blocks, "tree": tree, "layout": shape,
            "skills": sorted(skills, key=lambda s: s["path"]),
            "sizes": {"core": model.measure(core_chars, limits.core_chars),
                      "depth": {"size": depth, "limit": limits.system_depth,
                                "level": "over" if depth > limits.system_depth else "ok"},
                      "files": over, "documents": len(documents), "file_limit": limits.file_chars},
        }

    def pending(self, head: str) -> dict[str, Any]:
        """Open memory pull requests (the forge's answer), commits not pushed yet and commits
        sync set aside."""
        repo = self.repo()
        forge = self.forge.pending()
        pulls = model.pending_pulls(forge["pulls"], forge["reviews"])
        queued: dict[str, Any] = {"remote": None, "known": False, "commits": [], "count": 0}
        url = sync.remote_url(repo)
        if url is not None:
            queued["remote"] = sync.redact(url)
            tracking = repo.resolve(sync.TRACKING_REF)
            if tracking is not None:
                queued["known"] = True
                walker = repo.git.walk(head, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME)
                walker.hide(tracking)
                for commit in walker:
                    queued["count"] += 1
                    if len(queued["commits"]) < 50:
                        queued["commits"].append(_commit_row(commit))
        set_aside = []
        for item in sync.set_aside_commits(repo):
            row = {"commit": item.commit, "message": item.message, "ref": item.ref, "reason": item.reason,
                   "author": None, "role": None}
            with contextlib.suppress(KeyError, ValueError, pygit2.GitError):
                found = _commit_row(repo.git[item.commit].peel(pygit2.Commit))
                row.update(author=found["author"], role=found["role"], when=found["when"])
            set_aside.append(row)
        return {"forge": {k: forge[k] for k in ("asked", "repository", "reason", "error")}, "pulls": pulls,
                "queued": queued, "set_aside": set_aside}

    def core_text(self) -> str:
        """The memory block exactly as the agent's prompt has it."""
        from bot.memfs import PromptCompiler

        return PromptCompiler(self.root, repo=self.repo()).compile().text

    # ------------------------------------------------------------------ /file and /why
    def file(self, raw_path: str) -> dict[str, Any]:
        """One file of main with its lines (raises PathNotInMemoryError); `shared/<NAME>/<path>`
        is a file of that attached shared memory's projection, at its HEAD."""
        own = self.repo()
        repo, inner = shared_projection.in_shared_memory(own, raw_path)
        shown = raw_path.removesuffix(inner) if repo is not own else ""  # "shared/<NAME>/", or ""
        raw_path = inner
        head = self.head() if not shown else repo.head_sha() or ""
        ref = main_ref(repo)[0]
        place = provenance_texts.HISTORY_WHERE_MAIN.format(ref=ref_name(ref), sha=head[:10])
        found = file_path(repo, head, raw_path, place)
        data = repo.read(found, head) or b""
        text = _text(data)
        limits, _ = self._limits(repo, head)
        entry = read_document(data) if found.endswith(".md") else compile_rules.NO_CONTENT
        where = entry_kind(found, memory_layout(repo, head), repo.paths(head))
        return {"head": self.head() if shown else head, "path": shown + found, "kind": where,
                "description": entry.description,
                "text": text is not None, "lines": model.numbered(text) if text is not None else [],
                "chars": model.measure(len(text) if text is not None else len(data), limits.file_chars),
                "read_only": validate.is_read_only(data), "problem": entry.problem}

    def why(self, path: str, line: int | None) -> dict[str, Any]:
        """`why` on main's tip, each answer kept until a commit changes the file (raises
        PathNotInMemoryError, NoSuchLineError)."""
        from bot.provenance.why import why

        head = self.head()
        key = (path, line)
        if path.startswith(f"{shared_record.ADDRESS_ROOT}/"):
            key = None  # a shared memory's history, which this memory's HEAD does not follow
        with self._lock:
            kept = self._why.get(key) if key is not None else None
        if kept is not None and (kept[0] == head or self._still_holds(kept[0], head, kept[1]["path"])):
            return {**kept[1], "head": head}
        client = self.forge.client()  # none: not asked, for the reason the palace's status gives
        report = why(self.root, path, line, forge=client if client is not None else False,
                     transcripts=self.transcripts(), unasked_forge=self.forge.status())
        if key is not None and not any(o.get("forge_error") for o in report["origins"]):
            with self._lock:
                self._why.put(key, (head, report))
        return report

    def _still_holds(self, old: str, new: str, path: str) -> bool:
        """Whether `why` on `path` at `new` answers as at `old`: `old` is on new's first-parent
        chain, a few commits back, and no commit since has another version of the file. Blame
        then walks through those commits to `old` and finds the same lines, and a commit main
        contained lands where it did."""
        git = self.repo().git
        try:
            commit = git[new].peel(pygit2.Commit)
            base = _entry_id(git[old].peel(pygit2.Commit).tree, path)
            for _ in range(REUSE_WALK):
                if not commit.parent_ids:
                    return False
                commit = commit.parents[0]
                if str(commit.id) == old:
                    break
            else:
                return False
            walker = git.walk(new, pygit2.enums.SortMode.TOPOLOGICAL)
            walker.hide(old)
            for count, commit in enumerate(walker):
                if count >= REUSE_WALK or _entry_id(commit.tree, path) != base:
                    return False
        except (KeyError, ValueError, pygit2.GitError):
            return False
        return True

    # ------------------------------------------------------------------ /log
    def rows(self) -> list[dict[str, Any]]:
        """Every commit of main's history, newest first (`memrepo log`'s order), kept per commit
        of main and extended when main moves forward."""
        head = self.head()
        kept = self._rows
        if kept is not None and kept[0] == head:
            return kept[1]
        git = self.repo().git
        order = pygit2.enums.SortMode.TIME | pygit2.enums.SortMode.TOPOLOGICAL
        walker = git.walk(head, order)
        if kept is not None:
            with contextlib.suppress(KeyError, ValueError, pygit2.GitError):
                if git.descendant_of(head, kept[0]):
                    walker.hide(kept[0])
                    new = [_commit_row(c) for c in walker]
                    counts = kept[2] + model.day_counts(new)
                    rows = new + kept[1]
                    self._rows = (head, rows, counts)
                    return rows
            walker = git.walk(head, order)
        rows = [_commit_row(c) for c in walker]
        self._rows = (head, rows, model.day_counts(rows))
        return rows

    def touching(self, head: str, path: str) -> set[str]:
        """The commits that changed `path` (each differs from all of its parents there, as
        `memrepo log PATH` counts them)."""
        key = (head, path)
        found = self._touching.get(key)
        if found is not None:
            return found
        found = set()
        for commit in self.repo().git.walk(head, pygit2.enums.SortMode.TIME):
            mine = _entry_id(commit.tree, path)
            if all(_entry_id(parent.tree, path) != mine for parent in commit.parents) and (
                    commit.parents or mine is not None):
                found.add(str(commit.id))
        with self._lock:
            self._touching.put(key, found)
        return found

    def changed_paths(self, sha: str) -> list[str]:
        found = self._changed.get(sha)
        if found is not None:
            return found
        commit = self.repo().git[sha].peel(pygit2.Commit)
        git = self.repo().git
        diff = git.diff(commit.parents[0].tree, commit.tree) if commit.parents else commit.tree.diff_to_tree(swap=True)
        paths: set[str] = set()
        for delta in diff.deltas:
            paths.update((delta.old_file.path, delta.new_file.path))
        found = sorted(paths)
        with self._lock:
            self._changed.put(sha, found)
        return found

    def log(self, f: model.LogFilter) -> dict[str, Any]:
        head = self.head()
        rows = self.rows()
        path = None
        if f.path is not None:
            repo = self.repo()
            try:
                path = file_path(repo, head, f.path, "")
            except MemrepoError:
                path = f.path.strip().strip("/")
        touching = self.touching(head, path) if path else None
        selected = model.select_rows(rows, f, touching)
        everything = len(selected) == len(rows)
        kept = self._rows
        counts = kept[2] if everything and kept is not None and kept[0] == head else model.day_counts(selected)
        page = model.page_of(selected, f.page)
        page["rows"] = [{**row, "paths": self.changed_paths(row["sha"])} for row in page["rows"]]
        return {"head": head, "path": path, "filter": f, "chart": model.chart(counts), "all": len(rows), **page}

    # ------------------------------------------------------------------ /at
    def at(self, date_text: str, raw_path: str | None = None) -> dict[str, Any]:
        """Memory as main held it at the date, and what changed from then to now (raises
        BadDateError, BeforeHistoryError, PathNotInMemoryError)."""
        when: datetime = parse_when(date_text, what="date")
        head = self.head()
        report = at(self.root, when, raw_path) if raw_path else at(self.root, when)
        repo = self.repo()
        then_sha = report["commit"]
        then = repo.paths(then_sha)
        now = repo.paths(head)
        if raw_path:
            path = report["path"]
            then = {path: then[path]}
            now = {path: now[path]} if path in now else {}
        changes = model.changes(then, now)
        diffs = []
        for path in (changes["changed"] + changes["added"] + changes["removed"])[:DIFF_FILES]:
            old = _text(repo.git[then[path]].data) if path in then else ""
            new = _text(repo.git[now[path]].data) if path in now else ""
            status = "changed" if path in then and path in now else "added" if path in now else "removed"
            if old is None or new is None:
                diffs.append({"path": path, "status": status, "binary": True, "rows": [], "cut": 0})
            else:
                diffs.append({"path": path, "status": status, "binary": False, **model.unified(old, new)})
        count = sum(len(v) for v in changes.values())
        return {"head": head, "report": report, "changes": changes, "diffs": diffs, "count": count,
                "more": max(0, count - DIFF_FILES), "date": date_text}
