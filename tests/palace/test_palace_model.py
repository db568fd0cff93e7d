"""The palace's view-models and its gate, by tables: plain data in, plain data out (bot/palace/model.py,
bot/palace/gate.py). Where a view-model mirrors what the prompt compiler does (the order of core
blocks, which tree entries the prompt lists), it is checked against the compiler itself."""

from __future__ import annotations

import difflib
import re
from datetime import UTC, datetime

import pytest

from bot.config import Limits
from bot.errors import MemrepoError
from bot.memfs.prompt.compile import compile_memory, read_document, render_tree
from bot.palace import gate, model
from bot.palace.model import LogFilter, PalaceInputError


def ts(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp())


# ------------------------------------------------------------------------------ small pieces
@pytest.mark.parametrize(("text", "lines"), [
    ("", []),
    ("a", ["a"]),
    ("a\n", ["a"]),
    ("a\n\nb\n", ["a", "", "b"]),
    ("a\nb", ["a", "b"]),
    ("\n", [""]),
])
def test_lines_are_counted_as_git_counts_them(text: str, lines: list[str]) -> None:
    assert model.split_lines(text) == lines
    assert [row["n"] for row in model.numbered(text, 3)] == list(range(3, 3 + len(lines)))


@pytest.mark.parametrize(("size", "limit", "level", "percent"), [
    (0, 100, "ok", 0), (89, 100, "ok", 89), (90, 100, "near", 90), (100, 100, "near", 100), (101, 100, "over", 101),
    (5, 0, "over", 0),
])
def test_a_size_against_its_limit(size: int, limit: int, level: str, percent: int) -> None:
    assert model.measure(size, limit) == {"size": size, "limit": limit, "percent": percent, "level": level}


@pytest.mark.parametrize(("value", "expected"), [
    ("system/human.md", "system/human.md"), ("  notes/a.md ", "notes/a.md"), ("système/ü.md", "système/ü.md"),
])
def test_a_path_from_a_query(value: str, expected: str) -> None:
    assert model.parse_path(value) == expected


@pytest.mark.parametrize("value", [None, "", "   ", "a\nb", "a\x00b", "x" * 1025])
def test_a_path_that_is_not_one_is_refused(value: str | None) -> None:
    with pytest.raises(PalaceInputError):
        model.parse_path(value)


@pytest.mark.parametrize(("value", "expected"), [(None, None), ("", None), (" ", None), ("1", 1), (" 12 ", 12)])
def test_a_line_from_a_query(value: str | None, expected: int | None) -> None:
    assert model.parse_line(value) == expected


@pytest.mark.parametrize("value", ["0", "-1", "1.5", "x", "١٢", "1e3"])
def test_a_line_that_is_not_a_line_number_is_refused(value: str) -> None:
    with pytest.raises(PalaceInputError, match="not a line number"):
        model.parse_line(value)


# ------------------------------------------------------------------------------ the log's filter
def test_the_log_filter_reads_dates_as_memrepo_log_does() -> None:
    f = model.parse_log_filter({"path": "system/human.md", "since": "2026-03-01", "until": "2026-03-14",
                                "writer": "agent", "page": "2"})
    assert (f.path, f.writer, f.page) == ("system/human.md", "agent", 2)
    assert f.since == ts("2026-03-01T00:00:00")
    assert f.until == ts("2026-03-15T00:00:00") - 1  # a day alone covers that whole day
    assert model.parse_log_filter({"until": "2026-03-14T10:00Z"}).until == ts("2026-03-14T10:00:00")
    assert model.parse_log_filter({}) == LogFilter()
    assert f.query() == {"path": "system/human.md", "since": "2026-03-01", "until": "2026-03-14", "writer": "agent",
                         "page": "2"}
    assert f.query(page=3)["page"] == "3" and "page" not in LogFilter().query()


@pytest.mark.parametrize(("args", "problem"), [
    ({"since": "05/06/2024"}, "cannot read"),
    ({"until": "yesterday"}, "cannot read"),
    ({"since": "2026-03-02", "until": "2026-03-01"}, "after until"),
    ({"writer": "robot"}, "agent, dreamer, integrator, human"),
    ({"page": "0"}, "not a page number"),
    ({"path": "a\x01"}, "not a path"),
])
def test_a_log_filter_that_cannot_be_used_says_why(args: dict[str, str], problem: str) -> None:
    with pytest.raises(PalaceInputError, match=problem):
        model.parse_log_filter(args)


ROWS = [  # newest first, as the log lists them
    {"sha": "e", "time": ts("2026-03-03T10:00:00"), "role": "human"},
    {"sha": "d", "time": ts("2026-03-03T09:00:00"), "role": "integrator"},
    {"sha": "c", "time": ts("2026-03-02T23:59:59"), "role": "dreamer"},
    {"sha": "b", "time": ts("2026-03-01T12:00:00"), "role": "agent"},
    {"sha": "a", "time": ts("2026-03-01T00:00:00"), "role": "agent"},
]


@pytest.mark.parametrize(("args", "touching", "kept"), [
    ({}, None, "edcba"),
    ({"writer": "agent"}, None, "ba"),
    ({"since": "2026-03-02"}, None, "edc"),
    ({"until": "2026-03-02"}, None, "cba"),
    ({"since": "2026-03-01T12:00Z", "until": "2026-03-03T09:00Z"}, None, "dcb"),
    ({}, {"a", "d", "z"}, "da"),
    ({"writer": "agent"}, {"a", "d"}, "a"),
])
def test_the_log_keeps_the_commits_its_filter_names(args: dict[str, str], touching: set[str] | None,
                                                     kept: str) -> None:
    selected = model.select_rows(ROWS, model.parse_log_filter(args), touching)
    assert "".join(row["sha"] for row in selected) == kept


@pytest.mark.parametrize(("count", "page", "size", "shown", "pages"), [
    (0, 1, 2, [], 1), (5, 1, 2, [0, 1], 3), (5, 3, 2, [4], 3), (5, 9, 2, [4], 3), (4, 2, 2, [2, 3], 2),
])
def test_pages_of_the_log(count: int, page: int, size: int, shown: list[int], pages: int) -> None:
    out = model.page_of(list(range(count)), page, size)
    assert (out["rows"], out["pages"], out["total"]) == (shown, pages, count)


# ------------------------------------------------------------------------------ the chart
def test_the_chart_stacks_each_days_changes_by_writer() -> None:
    c = model.chart(model.day_counts(ROWS))
    assert (c["first"], c["last"], c["days"], c["cut"], c["total"]) == ("2026-03-01", "2026-03-03", 3, 0, 5)
    assert [(b["day"], b["writer"], b["count"]) for b in c["bars"]] == [
        ("2026-03-01", "agent", 2), ("2026-03-02", "dreamer", 1), ("2026-03-03", "integrator", 1),
        ("2026-03-03", "human", 1)]
    assert {w["writer"]: w["count"] for w in c["legend"]} == {"agent": 2, "dreamer": 1, "integrator": 1, "human": 1}
    assert c["top"] == 2
    plot = model.CHART_HEIGHT - model.CHART_BOTTOM - model.CHART_TOP
    bottom = model.CHART_TOP + plot
    agent, _, integrator, human = c["bars"]
    assert agent["h"] == plot and agent["y"] + agent["h"] == bottom  # the day's two changes reach the top
    assert integrator["y"] + integrator["h"] == pytest.approx(bottom)  # the first writer sits on the axis
    assert human["y"] + human["h"] == pytest.approx(integrator["y"])  # the next one on it
    xs = [b["x"] for b in c["bars"]]
    assert xs == sorted(xs) and xs[2] == xs[3]
    assert all(b["x"] >= model.CHART_LEFT and b["x"] + b["w"] <= model.CHART_WIDTH for b in c["bars"])


def test_a_long_history_shows_its_latest_days() -> None:
    rows = [{"sha": str(i), "time": ts("2026-01-01T12:00:00") + i * 86400, "role": "agent"} for i in range(100)]
    c = model.chart(model.day_counts(rows), max_days=30)
    assert (c["days"], c["cut"], c["last"], len(c["bars"]), c["total"]) == (30, 70, "2026-04-10", 30, 30)


def test_a_chart_of_nothing_has_no_bars() -> None:
    c = model.chart(model.day_counts([]))
    assert c["bars"] == [] and c["total"] == 0 and c["first"] is None


@pytest.mark.parametrize(("value", "top"), [(1, 1), (2, 2), (3, 5), (6, 10), (11, 20), (21, 50), (51, 100),
                                            (1001, 2000)])
def test_the_charts_top_is_a_round_number(value: int, top: int) -> None:
    assert model.nice_ceiling(value) == top


# ------------------------------------------------------------------------------ core memory
CORE = {
    "system/persona.md": "---\ndescription: Who I am\n---\n\nI am Ada.\n\nI keep notes.\n\n",
    "system/human.md": "---\ndescription: The user\n---\nLikes tea.\n",
    "system/project/plan.md": "---\ndescription: The plan\n---\n\n\n  - step one\n- step two",
    "system/project.md": "---\ndescription: The project\n---\nA project.\n",
    "system/a_b.md": "No frontmatter at all.\nSecond line.\n",
    "system/empty.md": "---\ndescription: Nothing\n---\n",
}


def test_core_blocks_come_in_the_prompts_order() -> None:
    prompt = compile_memory({p: t.encode() for p, t in CORE.items()}, Limits())
    projected = re.findall(r"<projection>\$MEMORY_DIR/(.+?)</projection>", prompt)
    assert sorted(CORE, key=model.core_key) == projected


@pytest.mark.parametrize("path", sorted(CORE))
def test_each_line_of_a_block_is_the_line_of_its_file(path: str) -> None:
    text = CORE[path]
    block = model.core_block(path, text, read_document(text.encode()), 20000)
    lines = text.split("\n")
    for row in block["lines"]:
        assert lines[row["n"] - 1] == row["text"]
    shown = "\n".join(row["text"] for row in block["lines"])
    assert shown in compile_memory({path: text.encode()}, Limits())  # the lines are the prompt's


def test_a_block_says_where_it_is_and_how_large() -> None:
    block = model.core_block("system/project/plan.md", CORE["system/project/plan.md"],
                             read_document(CORE["system/project/plan.md"].encode()), 50)
    assert (block["folders"], block["name"], block["description"]) == (["project"], "plan", "The plan")
    assert [row["n"] for row in block["lines"]] == [6, 7]
    assert block["chars"]["level"] == "over"
    unreadable = model.core_block("system/x.md", None, read_document(b"\xff\xfe"), 50)
    assert unreadable["lines"] == [] and unreadable["problem"]


# ------------------------------------------------------------------------------ the external tree
def _tree_files(count: int, folders: int) -> dict[str, tuple[str, int]]:
    return {f"reference/f{i % folders}/note-{i:02d}.md": (f"Note {i}" if i % 3 else "", 100 + i) for i in range(count)}


@pytest.mark.parametrize("limits", [
    Limits(), Limits(tree_children=3), Limits(tree_lines=10), Limits(tree_chars=300), Limits(tree_lines=2),
    Limits(tree_children=1, tree_lines=4),
])
@pytest.mark.parametrize(("count", "folders"), [(0, 1), (1, 1), (12, 3), (40, 7)])
def test_the_tree_marks_what_the_prompt_lists(limits: Limits, count: int, folders: int) -> None:
    files = _tree_files(count, folders)
    from bot.memfs.prompt.compile import Entry

    entries = {p: Entry(d) for p, (d, _) in files.items()}
    lines = render_tree(list(files), entries, limits, "$MEMORY_DIR")
    view = model.tree_view(files, lines, limits)
    shown = [r for r in view["rows"] if r["shown"]]
    listed = [re.sub(r"^[│├└─\s]+", "", line).split(" — ")[0].rstrip("/") for line in lines[1:]]
    if view["shown"] < view["total"]:
        listed = listed[:-1]  # the truncation notice
    assert [r["name"] for r in shown] == listed
    assert view["shown"] == len(listed) and view["total"] == len(view["rows"])
    assert view["lines"]["size"] == len(lines) and view["chars"]["size"] == len("\n".join(lines))
    assert [r["path"] for r in view["rows"] if not r["folder"]] == sorted(files, key=lambda p: p.split("/"))


# ------------------------------------------------------------------------------ pending work
@pytest.mark.parametrize(("reviews", "state", "by"), [
    (None, "unknown", []),
    ([], "none", []),
    ([{"reviewer": "bob", "state": "COMMENTED"}], "commented", [("bob", "commented")]),
    ([{"reviewer": "bob", "state": "APPROVED", "submitted_at": "1"}], "approved", [("bob", "approved")]),
    ([{"reviewer": "bob", "state": "APPROVED", "submitted_at": "1"},
      {"reviewer": "bob", "state": "COMMENTED", "submitted_at": "2"}], "approved", [("bob", "approved")]),
    ([{"reviewer": "bob", "state": "CHANGES_REQUESTED", "submitted_at": "1"},
      {"reviewer": "bob", "state": "APPROVED", "submitted_at": "2"}], "approved", [("bob", "approved")]),
    ([{"reviewer": "bob", "state": "APPROVED", "submitted_at": "1"},
      {"reviewer": "carol", "state": "CHANGES_REQUESTED", "submitted_at": "2"}], "changes_requested",
     [("bob", "approved"), ("carol", "changes_requested")]),
    ([{"reviewer": "bob", "state": "APPROVED", "submitted_at": "1"},
      {"reviewer": "bob", "state": "DISMISSED", "submitted_at": "2"}], "none", []),
])
def test_where_reviews_stand(reviews: list[dict[str, str]] | None, state: str, by: list[tuple[str, str]]) -> None:
    found = model.review_state(reviews)
    assert found["state"] == state
    assert [(r["reviewer"], r["state"]) for r in found["by"]] == by


@pytest.mark.parametrize(("labels", "head", "kind"), [
    (["memrepo:dream"], "anything", "dream"),
    ([], "memrepo/dream/20260314T090000Z-0a1b2c3d", "dream"),
    (["memrepo:agent-edit"], "x", "agent-edit"),
    ([], "memrepo/edit/a1/e1", "agent-edit"),
    (["memrepo:untrusted"], "feature", "memory"),
    (["bug"], "feature", None),
])
def test_which_pull_requests_are_memorys(labels: list[str], head: str, kind: str | None) -> None:
    assert model.pull_kind(labels, head) == kind


def test_pending_pull_requests_are_memorys_oldest_first_with_their_reviews() -> None:
    pulls = [{"number": 7, "labels": ["memrepo:agent-edit"], "head_ref": "x"},
             {"number": 3, "labels": ["docs"], "head_ref": "docs"},
             {"number": 5, "labels": [], "head_ref": "memrepo/dream/d"}]
    out = model.pending_pulls(pulls, {7: [{"reviewer": "bob", "state": "APPROVED"}]})
    assert [(p["number"], p["kind"], p["review"]["state"]) for p in out] == [(5, "dream", "unknown"),
                                                                             (7, "agent-edit", "approved")]


# ------------------------------------------------------------------------------ why
@pytest.mark.parametrize(("origin", "kind"), [
    ({"writer": "human", "via": "direct"}, "person-direct"),
    ({"writer": "human", "via": "merge"}, "person"),
    ({"writer": "agent", "via": "direct"}, "agent"),
    ({"writer": "dreamer", "via": "merge"}, "dreamer"),
    ({"writer": "integrator", "via": "merge", "resolution": {"base": "abc", "branch": "b"}}, "resolution"),
    ({"writer": "integrator", "via": "direct", "resolution": None}, "integrator"),
])
def test_how_an_origin_is_worded(origin: dict[str, object], kind: str) -> None:
    assert model.origin_kind(origin) == kind


def test_the_why_view_keeps_the_report_and_adds_what_the_page_shows() -> None:
    report = {"path": "p.md", "line": 2, "lines": [{"line": 2, "text": "x", "commit": "c1"}],
              "origins": [{"commit": {"sha": "c1"}, "writer": "dreamer", "via": "merge",
                           "pull_request": {"source": "forge", "reviews": [{"reviewer": "bob", "state": "APPROVED"}]}},
                          {"commit": {"sha": "c2"}, "writer": "human", "via": "direct", "pull_request": None}]}
    view = model.why_view(report)
    assert view["path"] == "p.md" and report["origins"][0].get("kind") is None  # the report is not changed
    first, second = view["origins"]
    assert (first["kind"], first["shown"][0]["text"], first["review"]["state"]) == ("dreamer", "x", "approved")
    assert (second["kind"], second["shown"], second["review"]) == ("person-direct", [], None)


# ------------------------------------------------------------------------------ then and now
def test_what_changed_from_then_to_now() -> None:
    then = {"a.md": "1", "b.md": "2", "c.md": "3"}
    now = {"a.md": "1", "b.md": "9", "d.md": "4"}
    assert model.changes(then, now) == {"added": ["d.md"], "removed": ["c.md"], "changed": ["b.md"]}


@pytest.mark.parametrize(("old", "new"), [
    ("a\nb\nc\n", "a\nB\nc\n"),
    ("", "new\nfile\n"),
    ("gone\n", ""),
    ("\n".join(str(i) for i in range(30)) + "\n", "\n".join(str(i) for i in range(30) if i not in (3, 20)) + "\nx\n"),
])
def test_the_diff_is_the_unified_diff(old: str, new: str) -> None:
    rows = model.unified(old, new)["rows"]
    sign = {"hunk": "", "ctx": " ", "del": "-", "add": "+"}
    ours = [sign[r["kind"]] + r["text"] for r in rows]
    theirs = [line.rstrip("\n") for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="")][2:]
    assert ours == theirs


def test_a_long_diff_is_cut_and_says_so() -> None:
    out = model.unified("", "".join(f"{i}\n" for i in range(50)), max_lines=10)
    assert len(out["rows"]) == 10 and out["cut"] == 41


# ------------------------------------------------------------------------------ the gate
@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.1.2.3", True), ("localhost", True), ("LOCALHOST", True), ("::1", True),
    ("[::1]", True), ("app.localhost", True), ("0.0.0.0", False), ("192.168.1.5", False), ("example.com", False),
    ("::", False), ("", False),
])
def test_which_addresses_are_loopback(host: str, loopback: bool) -> None:
    assert gate.is_loopback(host) is loopback


@pytest.mark.parametrize(("header", "name"), [
    ("127.0.0.1:8780", "127.0.0.1"), ("localhost", "localhost"), ("[::1]:8780", "::1"), ("[::1]", "::1"),
    ("example.com:80", "example.com"), ("::1", "::1"),
])
def test_the_name_of_a_host_header(header: str, name: str) -> None:
    assert gate.host_name(header) == name


@pytest.mark.parametrize(("host", "token", "required", "problem"), [
    ("127.0.0.1", None, None, None),
    ("::1", "", None, None),
    ("127.0.0.1", "a-long-enough-token", "a-long-enough-token", None),
    ("0.0.0.0", None, None, "token is required"),
    ("192.168.1.5", "  ", None, "token is required"),
    ("0.0.0.0", "short", None, "too short"),
    ("0.0.0.0", "a-long-enough-token", "a-long-enough-token", None),
])
def test_the_palace_starts_off_loopback_only_with_a_token(host: str, token: str | None, required: str | None,
                                                          problem: str | None) -> None:
    if problem is None:
        assert gate.check_start(host, token) == required
    else:
        with pytest.raises(MemrepoError, match=problem):
            gate.check_start(host, token)


TOKEN = "s3cret-token-of-the-palace"


@pytest.mark.parametrize(("token", "parts", "decision"), [
    (None, {"host": "127.0.0.1:8780"}, gate.ALLOW),
    (None, {"host": "localhost:8780"}, gate.ALLOW),
    (None, {"host": "[::1]:8780"}, gate.ALLOW),
    (None, {"host": "rebound.example:8780"}, gate.WRONG_HOST),
    (TOKEN, {"host": "memory.example"}, gate.REFUSE),
    (TOKEN, {"host": "memory.example", "authorization": f"Bearer {TOKEN}"}, gate.ALLOW),
    (TOKEN, {"host": "memory.example", "authorization": f"bearer   {TOKEN} "}, gate.ALLOW),
    (TOKEN, {"host": "memory.example", "authorization": f"Basic {TOKEN}"}, gate.REFUSE),
    (TOKEN, {"host": "memory.example", "authorization": "Bearer wrong"}, gate.REFUSE),
    (TOKEN, {"host": "memory.example", "query_token": TOKEN}, gate.REMEMBER),
    (TOKEN, {"host": "memory.example", "query_token": TOKEN[:-1]}, gate.REFUSE),
    (TOKEN, {"host": "memory.example", "cookie": TOKEN}, gate.REFUSE),  # the cookie holds an HMAC, not the token
])
def test_who_the_gate_lets_in(token: str | None, parts: dict[str, str], decision: str) -> None:
    check = gate.Gate(token)
    request = {"authorization": None, "query_token": None, "cookie": None, **parts}
    assert check.decide(**request) == decision


def test_the_gates_cookie_is_an_hmac_that_dies_with_the_palace() -> None:
    first, second = gate.Gate(TOKEN), gate.Gate(TOKEN)
    assert first.decide(host="x", authorization=None, query_token=None, cookie=first.cookie_value()) == gate.ALLOW
    assert TOKEN not in first.cookie_value()
    assert second.decide(host="x", authorization=None, query_token=None, cookie=first.cookie_value()) == gate.REFUSE
    assert TOKEN not in repr(first)
