"""The palace's pages as plain data: pure functions from what memory holds (files, the reports of
`why` and `at`, the forge's pull requests, commit rows) to what a page shows.

No git, no HTTP, no Flask here: the shell (`source.py`) reads, these functions decide what is
shown and how it is grouped, the templates under `templates/palace/` lay it out. Each is tested
by tables (tests/palace/test_palace_model.py).
"""

from __future__ import annotations

import difflib
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from bot.config import Limits
from bot.contracts import DREAM_BRANCH_PREFIX, EDIT_BRANCH_PREFIX, LABEL_AGENT_EDIT, LABEL_DREAM, LABEL_PREFIX
from bot.dates import BadDateError, parse_when_bound
from bot.errors import MemrepoError
from bot.identity import ROLES
from bot.memfs import Entry, trim_blank_lines

PALACE_BAD_PATH = "{path!r} is not a path of memory: use a relative path such as system/human.md"
PALACE_BAD_WRITER = "writer {value!r} is not a writer: use one of {roles}, or leave it empty"
PALACE_EMPTY_RANGE = "since {since} is after until {until}; nothing can be in between"

NEAR = 0.9  # a size at 90% of its limit is shown as close to it
PATH_MAX = 1024
LOG_PAGE = 50
CHART_DAYS = 92
DIFF_CONTEXT = 3
DIFF_LINES = 400  # lines of one file's diff shown before it is cut


class PalaceInputError(MemrepoError):
    """A query parameter the palace cannot use; the message says what to send instead."""


# ------------------------------------------------------------------------------ small pieces
def split_lines(text: str) -> list[str]:
    """A file's lines as git counts them: a last line without a newline is a line, the empty
    string after a final newline is not."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def numbered(text: str, first: int = 1) -> list[dict[str, Any]]:
    return [{"n": first + i, "text": line} for i, line in enumerate(split_lines(text))]


def percent(part: int, whole: int) -> int:
    return round(100 * part / whole) if whole else 0


def level(size: int, limit: int) -> str:
    """`over`, `near` (within 10% of the limit) or `ok`."""
    if size > limit:
        return "over"
    return "near" if size >= NEAR * limit else "ok"


def measure(size: int, limit: int) -> dict[str, Any]:
    return {"size": size, "limit": limit, "percent": percent(size, limit), "level": level(size, limit)}


def short(sha: str | None) -> str:
    return (sha or "")[:10]


# ------------------------------------------------------------------------------ query parameters
def parse_path(value: str | None) -> str:
    """A memory path from a query string (the file's existence is the shell's to check)."""
    text = (value or "").strip()
    if not text:
        raise PalaceInputError("no file named: add ?path=PATH (a file of memory, such as system/human.md)")
    if len(text) > PATH_MAX or any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise PalaceInputError(PALACE_BAD_PATH.format(path=text[:80]))
    return text


def parse_line(value: str | None) -> int | None:
    """A line number from 1, or None when none is given."""
    if value is None or value.strip() == "":
        return None
    text = value.strip()
    if not (text.isascii() and text.isdecimal()) or int(text) < 1:
        raise PalaceInputError(f"line {text[:40]!r} is not a line number: use a whole number from 1")
    return int(text)


def parse_page(value: str | None) -> int:
    if value is None or value.strip() == "":
        return 1
    text = value.strip()
    if not (text.isascii() and text.isdecimal()) or not 1 <= int(text) <= 100_000:
        raise PalaceInputError(f"page {text[:40]!r} is not a page number: use a whole number from 1")
    return int(text)


@dataclass(frozen=True)
class LogFilter:
    """What /log shows: commits that changed `path` (None: any), committed in [since, until]
    (whole seconds, both ends included), by `writer` (None: any), page `page` of LOG_PAGE."""

    path: str | None = None
    since: int | None = None
    until: int | None = None
    writer: str | None = None
    page: int = 1
    since_text: str = ""
    until_text: str = ""

    def query(self, **changes: Any) -> dict[str, str]:
        """The query string of this filter (with `changes`), without empty parameters."""
        values = {"path": self.path or "", "since": self.since_text, "until": self.until_text,
                  "writer": self.writer or "", "page": "" if self.page == 1 else str(self.page)}
        values.update({k: "" if v is None else str(v) for k, v in changes.items()})
        return {k: v for k, v in values.items() if v}


def _bound(text: str, what: str, *, end: bool) -> int:
    try:
        moment, day_alone = parse_when_bound(text, what=what)
    except BadDateError as exc:
        raise PalaceInputError(str(exc)) from None
    if end and day_alone:
        return math.floor((moment + timedelta(days=1)).timestamp()) - 1
    return math.floor(moment.timestamp()) if end else math.ceil(moment.timestamp())


def parse_log_filter(args: Mapping[str, str]) -> LogFilter:
    """The filter of /log from its query parameters: `path`, `since`, `until` (the dates of
    `memrepo log`; an `until` that is a day alone covers that day), `writer`, `page`."""
    raw_path = (args.get("path") or "").strip()
    path = parse_path(raw_path) if raw_path else None
    since_text = (args.get("since") or "").strip()
    until_text = (args.get("until") or "").strip()
    since = _bound(since_text, "since", end=False) if since_text else None
    until = _bound(until_text, "until", end=True) if until_text else None
    if since is not None and until is not None and since > until:
        raise PalaceInputError(PALACE_EMPTY_RANGE.format(since=since_text, until=until_text))
    writer = (args.get("writer") or "").strip() or None
    if writer is not None and writer not in ROLES:
        raise PalaceInputError(PALACE_BAD_WRITER.format(value=writer[:40], roles=", ".join(ROLES)))
    return LogFilter(path, since, until, writer, parse_page(args.get("page")), since_text, until_text)


# ------------------------------------------------------------------------------ core memory
def core_key(path: str) -> list[tuple[str, bool]]:
    """Sort key putting core files in the order the compiled prompt has them: names sorted at
    each level, a file before a folder of the same name (compile._render_core)."""
    parts = _inside_core(path)
    return [(name, True) for name in parts[:-1]] + [(parts[-1].removesuffix(".md"), False)]


def _inside_core(path: str) -> list[str]:
    """A core file's path within core memory: under system/ (v1), or from the root (v2)."""
    return path.split("/")[1:] if path.startswith("system/") else path.split("/")


def body_line(text: str, body: str) -> int:
    """The line (from 1) of `text` where the prompt's body begins: `body` is the part of the
    text after its frontmatter (a suffix), the prompt shows it without its blank lines around."""
    shown = trim_blank_lines(body)
    offset = len(text) - len(body) + max(0, body.find(shown))
    return text.count("\n", 0, offset) + 1


def core_block(path: str, text: str | None, entry: Entry, file_limit: int) -> dict[str, Any]:
    """One compiled core block: where it is, its description, and the lines the prompt shows
    with their line numbers in the file (so each links to /why)."""
    inner = _inside_core(path)
    block: dict[str, Any] = {"path": path, "folders": inner[:-1], "name": inner[-1].removesuffix(".md"),
                             "description": entry.description, "problem": entry.problem, "lines": [],
                             "chars": measure(len(text) if text is not None else 0, file_limit)}
    if text is None or entry.problem is not None or not text.endswith(entry.body):
        return block
    body = trim_blank_lines(entry.body)
    if body:
        block["lines"] = numbered(body, body_line(text, entry.body))
    return block


def core_blocks(files: Mapping[str, str | None], entries: Mapping[str, Entry], file_limit: int
                ) -> list[dict[str, Any]]:
    """Every core block, in the prompt's order."""
    return [core_block(p, files[p], entries[p], file_limit) for p in sorted(files, key=core_key)]


# ------------------------------------------------------------------------------ the external tree
def tree_rows(files: Mapping[str, tuple[str, int]], limits: Limits) -> dict[str, Any]:
    """The external-memory tree (path -> (description, characters)) as rows in the prompt's
    order (in each folder its folders, then its files, names sorted), each marked
    `candidate` when the compiled prompt's tree may list it: at most `tree_children` entries a
    folder, in a folder that is listed itself (compile.render_tree cuts the same way, then
    stops when `tree_lines` or `tree_chars` is reached; see tree_view)."""
    root: dict[str, Any] = {"folders": {}, "files": []}
    total = len(files)
    for path in files:
        *folders, name = path.split("/")
        node = root
        for part in folders:
            if part not in node["folders"]:
                node["folders"][part] = {"folders": {}, "files": []}
                total += 1
            node = node["folders"][part]
        node["files"].append(name)

    rows: list[dict[str, Any]] = []

    def visit(node: dict[str, Any], prefix: str, depth: int, listed: bool) -> None:
        items = [(n, node["folders"][n]) for n in sorted(node["folders"])] + [(n, None) for n in sorted(node["files"])]
        for index, (name, sub) in enumerate(items):
            path = prefix + name
            in_prompt = listed and index < limits.tree_children
            if sub is None:
                description, chars = files[path]
                rows.append({"depth": depth, "name": name, "path": path, "folder": False, "description": description,
                             "chars": chars, "candidate": in_prompt})
            else:
                rows.append({"depth": depth, "name": name, "path": path, "folder": True, "description": "",
                             "chars": None, "candidate": in_prompt})
                visit(sub, path + "/", depth + 1, in_prompt)

    visit(root, "", 0, True)
    return {"rows": rows, "total": total}


def tree_view(files: Mapping[str, tuple[str, int]], prompt_lines: Sequence[str], limits: Limits
              ) -> dict[str, Any]:
    """The tree's rows, each marked `shown` when the compiled prompt lists it, and the prompt's
    tree against its limits. `prompt_lines`: compile.render_tree's lines for the same files
    (the head line, the entries it has room for in the same order as the candidate rows,
    then the truncation notice when something is left out)."""
    tree = tree_rows(files, limits)
    rows, total = tree["rows"], tree["total"]
    shown = len(prompt_lines) - 1 if len(prompt_lines) - 1 == total else max(0, len(prompt_lines) - 2)
    seen = 0
    for row in rows:
        row["shown"] = row["candidate"] and seen < shown
        seen += row["candidate"]
    chars = len("\n".join(prompt_lines))
    return {"rows": rows, "shown": shown, "total": total, "lines": measure(len(prompt_lines), limits.tree_lines),
            "chars": measure(chars, limits.tree_chars)}


# ------------------------------------------------------------------------------ pending work
def review_state(reviews: Sequence[Mapping[str, Any]] | None) -> dict[str, Any]:
    """Where a pull request's reviews stand, as GitHub counts them: each reviewer's latest
    approval or request for changes counts (a comment does not replace it; a dismissed
    review is withdrawn). `state` is `approved`, `changes_requested`, `commented`, `none`, or
    `unknown` when the reviews could not be read."""
    if reviews is None:
        return {"state": "unknown", "by": []}
    latest: dict[str, str] = {}
    commented: list[str] = []
    for review in sorted(reviews, key=lambda r: r.get("submitted_at") or ""):
        who, state = str(review.get("reviewer") or ""), str(review.get("state") or "").upper()
        if state in ("APPROVED", "CHANGES_REQUESTED"):
            latest[who] = state
        elif state == "DISMISSED":
            latest.pop(who, None)
        elif state == "COMMENTED" and who not in commented:
            commented.append(who)
    by = [{"reviewer": who, "state": state.lower()} for who, state in latest.items()]
    by += [{"reviewer": who, "state": "commented"} for who in commented if who not in latest]
    if "CHANGES_REQUESTED" in latest.values():
        state = "changes_requested"
    elif "APPROVED" in latest.values():
        state = "approved"
    else:
        state = "commented" if commented else "none"
    return {"state": state, "by": by}


def pull_kind(labels: Iterable[str], head_ref: str) -> str | None:
    """`dream`, `agent-edit`, `memory` (another memrepo label) or None: not memory's."""
    labels = set(labels)
    if LABEL_DREAM in labels or head_ref.startswith(DREAM_BRANCH_PREFIX):
        return "dream"
    if LABEL_AGENT_EDIT in labels or head_ref.startswith(EDIT_BRANCH_PREFIX):
        return "agent-edit"
    if any(label.startswith(LABEL_PREFIX) for label in labels):
        return "memory"
    return None


def pending_pulls(pulls: Sequence[Mapping[str, Any]], reviews: Mapping[int, Sequence[Mapping[str, Any]] | None]
                  ) -> list[dict[str, Any]]:
    """Open memory pull requests (plain data of the forge's answer), oldest first, each with
    its kind and where its reviews stand."""
    out = []
    for pr in sorted(pulls, key=lambda p: p["number"]):
        kind = pull_kind(pr.get("labels") or (), pr.get("head_ref") or "")
        if kind is None:
            continue
        out.append({**pr, "kind": kind, "review": review_state(reviews.get(pr["number"]))})
    return out


# ------------------------------------------------------------------------------ why
def origin_kind(origin: Mapping[str, Any]) -> str:
    """How the page words an origin: `person-direct`, `person`, `agent`, `dreamer`,
    `resolution` (the integrator resolving a conflict) or `integrator`."""
    writer = origin.get("writer")
    if writer == "human":
        return "person-direct" if origin.get("via") == "direct" else "person"
    if writer in ("agent", "dreamer"):
        return str(writer)
    return "resolution" if origin.get("resolution") else "integrator"


def why_view(report: Mapping[str, Any]) -> dict[str, Any]:
    """The report of `bot.provenance.why.why` with what the page adds: each origin's wording,
    its lines' text, and where the pull request's reviews stand."""
    by_commit: dict[str, list[Mapping[str, Any]]] = {}
    for line in report.get("lines") or ():
        by_commit.setdefault(line["commit"], []).append(line)
    origins = []
    for origin in report.get("origins") or ():
        pr = origin.get("pull_request")
        origins.append({**origin, "kind": origin_kind(origin),
                        "shown": by_commit.get(origin["commit"]["sha"], []),
                        "review": review_state(pr.get("reviews")) if pr and pr.get("source") == "forge" else None})
    return {**report, "origins": origins}


# ------------------------------------------------------------------------------ the log
def select_rows(rows: Sequence[Mapping[str, Any]], f: LogFilter, touching: set[str] | None = None
                ) -> list[Mapping[str, Any]]:
    """The commit rows (newest first; each with `sha`, `time` in seconds, `role`) the filter
    keeps; `touching`: the commits that changed the filter's path (the shell's answer)."""
    lo = f.since if f.since is not None else -(2**63)
    hi = f.until if f.until is not None else 2**63
    if f.writer is None and touching is None:
        if f.since is None and f.until is None:
            return list(rows)
        return [row for row in rows if lo <= row["time"] <= hi]
    return [row for row in rows if lo <= row["time"] <= hi and (f.writer is None or row["role"] == f.writer)
            and (touching is None or row["sha"] in touching)]


def page_of(rows: Sequence[Any], page: int, size: int = LOG_PAGE) -> dict[str, Any]:
    pages = max(1, -(-len(rows) // size))
    page = min(page, pages)
    return {"rows": list(rows[(page - 1) * size: page * size]), "page": page, "pages": pages, "total": len(rows)}


_EPOCH = date(1970, 1, 1)


def _date(days: int) -> date:
    """The UTC day `days` after 1970-01-01 (a commit time // 86400)."""
    return _EPOCH + timedelta(days=days)


CHART_WIDTH, CHART_HEIGHT = 720, 200
CHART_LEFT, CHART_BOTTOM, CHART_TOP = 44, 24, 10


def nice_ceiling(value: int) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50, ... at or above `value` (the chart's top)."""
    step = 1
    while True:
        for m in (1, 2, 5):
            if m * step >= value:
                return m * step
        step *= 10


def day_counts(rows: Iterable[Mapping[str, Any]]) -> Counter[tuple[int, str]]:
    """Changes per (day since the epoch, UTC; writer) of commit rows."""
    return Counter((row["time"] // 86400, row["role"]) for row in rows)


def chart(counted: Mapping[tuple[int, str], int], max_days: int = CHART_DAYS) -> dict[str, Any]:
    """Changes per day (UTC) by writer (day_counts) as stacked bars: the geometry of an SVG drawn
    on the server. Days run from the first to the last day with a change, the latest `max_days`
    of them when there are more (`cut` says how many earlier days are left out)."""
    counts: dict[int, dict[str, int]] = {}  # days since the epoch -> writer -> changes
    for (day, role), n in counted.items():
        if n:
            counts.setdefault(day, {})[role] = n
    empty = {"width": CHART_WIDTH, "height": CHART_HEIGHT, "bars": [], "ticks": [], "labels": [], "days": 0,
             "cut": 0, "total": sum(counted.values()), "first": None, "last": None,
             "legend": [{"writer": w, "count": 0} for w in ROLES]}
    if not counts:
        return empty
    last, first = max(counts), min(counts)
    days = last - first + 1
    cut = max(0, days - max_days)
    first += cut
    days -= cut
    shown = {d: c for d, c in counts.items() if d >= first}
    top = nice_ceiling(max(sum(c.values()) for c in shown.values()))
    plot_w = CHART_WIDTH - CHART_LEFT - 8
    plot_h = CHART_HEIGHT - CHART_BOTTOM - CHART_TOP
    slot = plot_w / days
    bar_w = max(1.0, slot * 0.8)
    bars = []
    for day, by in sorted(shown.items()):
        x = CHART_LEFT + (day - first) * slot + (slot - bar_w) / 2
        y = CHART_TOP + plot_h
        for writer in ROLES:
            n = by.get(writer, 0)
            if not n:
                continue
            h = plot_h * n / top
            y -= h
            bars.append({"x": round(x, 2), "y": round(y, 2), "w": round(bar_w, 2), "h": round(h, 2),
                         "writer": writer, "day": _date(day).isoformat(), "count": n})
    ticks = [{"y": round(CHART_TOP + plot_h - plot_h * v / top, 2), "value": v} for v in (0, top // 2, top)
             if v or top]
    every = max(1, -(-days // 8))
    labels = [{"x": round(CHART_LEFT + i * slot + slot / 2, 2), "text": _date(first + i).strftime("%m-%d")}
              for i in range(0, days, every)]
    totals = {w: sum(c.get(w, 0) for c in shown.values()) for w in ROLES}
    return {**empty, "bars": bars, "ticks": ticks, "labels": labels, "days": days, "cut": cut,
            "total": sum(totals.values()), "first": _date(first).isoformat(), "last": _date(last).isoformat(),
            "legend": [{"writer": w, "count": totals[w]} for w in ROLES], "top": top}


# ------------------------------------------------------------------------------ memory then and now
def changes(then: Mapping[str, str], now: Mapping[str, str]) -> dict[str, list[str]]:
    """Paths added, removed and changed from `then` to `now` (path -> blob id each)."""
    return {"added": sorted(set(now) - set(then)), "removed": sorted(set(then) - set(now)),
            "changed": sorted(p for p in set(then) & set(now) if then[p] != now[p])}


def _span(start: int, stop: int) -> str:
    """A hunk's range as unified diffs write it: `3` for one line, `2,0` before an empty one."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def unified(old: str, new: str, context: int = DIFF_CONTEXT, max_lines: int = DIFF_LINES) -> dict[str, Any]:
    """A unified diff of two texts as rows (`hunk`, `del`, `add`, `ctx`), with old and new line
    numbers, cut after `max_lines` rows (`cut`: how many were left out)."""
    rows: list[dict[str, Any]] = []
    a, b = split_lines(old), split_lines(new)
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(context):
        first, last = group[0], group[-1]
        rows.append({"kind": "hunk", "text": f"@@ -{_span(first[1], last[2])} +{_span(first[3], last[4])} @@",
                     "old": None, "new": None})
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows += [{"kind": "ctx", "text": a[i], "old": i + 1, "new": j1 + i - i1 + 1} for i in range(i1, i2)]
                continue
            rows += [{"kind": "del", "text": a[i], "old": i + 1, "new": None} for i in range(i1, i2)]
            rows += [{"kind": "add", "text": b[j], "old": None, "new": j + 1} for j in range(j1, j2)]
    cut = max(0, len(rows) - max_lines)
    return {"rows": rows[:max_lines], "cut": cut}
