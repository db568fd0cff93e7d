"""The palace in a real browser: headless Chromium (tests/browser.py) against `memrepo palace` on a
memory with every kind of writer in it (tests/palace_world.py: an agent's edit in a known
conversation, a dream merged through localhub, a person's edit, a set-aside edit, an open dream,
a queued edit). The assertions read the DOM as the browser built it, scripts run."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from bot.memfs.tool.memory_tool import MemoryTool
from tests.browser import Browser, Node, colours, parse
from tests.palace_world import HUMAN, RECORD, TEAM, PalaceProcess, World, world
from tests.waiting import wait_until


@pytest.fixture(scope="module")
def memory_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with world(tmp_path_factory.mktemp("palace")) as w:
        yield w


@pytest.fixture(scope="module")
def palace(memory_world: World) -> Iterator[PalaceProcess]:
    process = PalaceProcess(memory_world, "--poll", "0.5")
    yield process
    process.stop()
    assert "Traceback" not in process.errors, process.errors


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    b = Browser()
    yield b
    b.close()


def open_page(browser: Browser, palace: PalaceProcess, path: str) -> Node:
    return parse(browser.open(palace.url + path))


def test_the_memory_page_shows_core_blocks_the_tree_and_what_is_pending(
        memory_world: World, palace: PalaceProcess, browser: Browser) -> None:
    dom = open_page(browser, palace, "")
    assert dom.find("h1").words() == "Memory of alice/memory"
    # core memory: each block, each line linked to its provenance
    human = next(a for a in dom.find_all("article", class_="block") if "system/human.md" in a.words())
    sam = memory_world.line_of(HUMAN, "Wants to be called Sam.")
    line = human.find("li", id=f"L{sam}")
    assert "Wants to be called Sam." in line.words()
    assert line.find("a").attrs["href"] == f"/why?path=system/human.md&line={sam}"
    assert "Works on the platform team." in human.words()
    assert "of 20,000 characters" in human.words()
    # the external tree with descriptions
    tree = dom.find("table", class_="tree")
    team = next(row for row in tree.find_all("tr") if "team.md" in row.words())
    assert "The team the user works in" in team.words()
    assert team.find("a").attrs["href"] == f"/file?path={TEAM}"
    assert "conversations/" in tree.words()
    # sizes against the limits
    assert "of 65,536 characters" in dom.find("dl", class_="sizes").words()
    # pending: the open dream with its label and review, the set-aside edit, the queued one
    second = memory_world.facts["open_dream"]
    pull = dom.find("li", class_="pull")
    assert pull.attrs["data-number"] == str(second.pr)
    assert pull.find("a").attrs["href"].endswith(f"/alice/memory/pull/{second.pr}")
    assert "memrepo/dream/" in pull.words() and "carol requested changes" in pull.words()
    assert "not approved" in pull.words()
    aside = dom.find("li", class_="aside")
    kept = memory_world.facts["set_aside"]
    assert "Record the user's new team" in aside.words() and kept.ref in aside.words()
    assert TEAM in aside.words() and "agent" in aside.words()
    assert "Note a follow-up" in dom.find("ul", class_="queued").words()


def test_a_screenshot_of_the_memory_page_is_not_blank(palace: PalaceProcess, browser: Browser) -> None:
    browser.open(palace.url)
    distinct, share = colours(browser.screenshot(scale=0.4))
    assert distinct >= 16, distinct  # text, headings, badges and the header bar
    assert share >= 0.05, share  # more than a few stray pixels differ from the background


def test_the_provenance_chain_of_an_agents_line_quotes_the_user(
        memory_world: World, palace: PalaceProcess, browser: Browser) -> None:
    sam = memory_world.line_of(HUMAN, "Wants to be called Sam.")
    dom = open_page(browser, palace, f"why?path={HUMAN}&line={sam}")
    assert dom.find("h1").words() == f"Why line {sam} of {HUMAN}"
    origin = dom.find("section", class_="o-agent")
    assert origin.find("h2").words() == "Written by agent Ada with the memory tool"
    commit = origin.find("li", class_="step-commit").words()
    assert memory_world.facts["agent_commit"] in commit and "Ada <a1@agents.memrepo>" in commit
    assert "Record what the user wants to be called" in commit
    assert "Committed straight to main." in origin.find("li", class_="step-landed").words()
    assert "conversation c1" in origin.find("li", class_="step-turn").words()
    said = origin.find("li", class_="step-transcript")
    assert said.find("h3").words() == "What the user said"
    assert [q.words() for q in said.find_all("blockquote")] == ["Please call me Sam from now on."]
    assert memory_world.facts["asked"] in said.words()


def test_the_provenance_chain_of_a_dreams_line_reaches_its_pull_request_reviews_and_messages(
        memory_world: World, palace: PalaceProcess, browser: Browser) -> None:
    dream = memory_world.facts["dream"]
    line = memory_world.line_of(RECORD, "I live in Berlin.")
    dom = open_page(browser, palace, f"why?path={RECORD}&line={line}")
    origin = dom.find("section", class_="o-dreamer")
    assert origin.find("h2").words() == "Written by the dreamer"
    assert memory_world.facts["dream_merge"][:10] in origin.find("li", class_="step-landed").words()
    pull = origin.find("li", class_="step-pull")
    assert pull.find("h3").words() == f"Pull request #{dream.pr}"
    assert pull.find("a").attrs["href"].endswith(f"/alice/memory/pull/{dream.pr}")
    assert "merged" in pull.words() and "bob: approved" in pull.words() and "memrepo/dream/" in pull.words()
    step = origin.find("li", class_="step-dream").words()
    assert f"Dream {dream.dream_id}" in step and "manual" in step and "verbatim" in step
    assert memory_world.facts["berlin"] in step
    said = origin.find("li", class_="step-transcript")
    assert [q.words() for q in said.find_all("blockquote")] == ["I live in Berlin."]


def test_where_the_transcript_is_not_the_dreams_messages_are_quoted_from_its_pull_request(
        memory_world: World, browser: Browser, tmp_path: Path) -> None:
    """A reviewer's machine, which holds none of the agent's transcripts: the user's words still
    show, as the dream's pull request quotes them, and the page says where they come from."""
    elsewhere = PalaceProcess(memory_world, home=tmp_path / "reviewer")
    try:
        line = memory_world.line_of(RECORD, "I live in Berlin.")
        said = open_page(browser, elsewhere, f"why?path={RECORD}&line={line}").find("li", class_="step-transcript")
    finally:
        elsewhere.stop()
    assert f"Quoted from pull request #{memory_world.facts['dream'].pr}'s description" in said.words()
    assert "not available locally" in said.words()
    assert [q.words() for q in said.find_all("blockquote")] == ["I live in Berlin."]
    assert "Traceback" not in elsewhere.errors, elsewhere.errors


def test_a_line_a_person_wrote_says_so(memory_world: World, palace: PalaceProcess, browser: Browser) -> None:
    line = memory_world.line_of(HUMAN, "Works on the platform team.")
    dom = open_page(browser, palace, f"why?path={HUMAN}&line={line}")
    origin = dom.find("section", class_="o-person-direct")
    assert origin.find("h2").words() == "Written directly by a person"
    assert "Pat Person <pat@example.com>" in origin.words()
    assert "no pull request, dream or conversation is behind it" in origin.words()
    assert not origin.find_all("li", class_="step-pull") and not origin.find_all("li", class_="step-transcript")


def test_the_log_charts_changes_by_writer_and_filters(palace: PalaceProcess, browser: Browser) -> None:
    dom = open_page(browser, palace, "log")
    chart = dom.find("svg", class_="chart")
    assert "Changes per day by writer" in chart.find("title").words()
    writers = {cls for rect in chart.find_all("rect") for cls in rect.attrs["class"].split()}
    assert writers == {"w-agent", "w-dreamer", "w-human"}  # alice, a person, merged the dream on the forge
    assert all(rect.find("title").words() for rect in chart.find_all("rect"))
    rows = dom.find("table", class_="log").find_all("tr")[1:]
    summaries = [row.words() for row in rows]
    assert any("Record what the user wants to be called" in s for s in summaries)
    assert any("Add the user's team" in s for s in summaries)
    human = open_page(browser, palace, "log?writer=human&path=system/human.md")
    shown = [row.find("span", class_="writer").words() for row in human.find("table", class_="log").find_all("tr")[1:]]
    assert shown and set(shown) == {"human"}
    assert human.find("select", id="log-writer").find("option", value="human").attrs.get("selected") is not None


def test_memory_then_shows_the_diff_against_now(memory_world: World, palace: PalaceProcess, browser: Browser) -> None:
    before = memory_world.facts["before_person"]  # the dream's merge: before the person's edit
    dom = open_page(browser, palace, f"at?date={quote(f'@{before}')}")
    assert dom.find("h1").words().startswith("Memory at")
    diffs = {d.find("h3").words(): d for d in dom.find_all("section", class_="diff")}
    human = diffs[f"changed {HUMAN}"]
    assert [s.words() for s in human.find_all("span", class_="add")] == ["+Works on the platform team."]
    assert f"added {TEAM}" in diffs
    assert dom.find("input", id="at-date").attrs["value"] == f"@{before}"


def test_an_open_page_follows_main_without_a_reload(memory_world: World, palace: PalaceProcess,
                                                    browser: Browser) -> None:
    browser.open(palace.url)
    browser.evaluate("window.notReloaded = true")
    before = browser.evaluate("document.body.dataset.head")
    done = MemoryTool(memory_world.memory, push=False).call({
        "command": "str_replace", "path": HUMAN, "old_str": "Works on the platform team.",
        "new_str": "Works on the platform team.\nDrinks green tea.", "reason": "Record what the user drinks"})
    assert done.ok, done.message
    wait_until(lambda: "Drinks green tea." in browser.dom(), 20, "the page to show main's new commit")
    assert browser.evaluate("document.body.dataset.head") == done.commit != before
    assert browser.evaluate("window.notReloaded") is True  # the same document, its <main> replaced
    assert browser.evaluate("document.getElementById('head-sha').textContent") == done.commit[:10]
    assert "main is now at" in browser.evaluate("document.getElementById('live').textContent")


def test_every_page_is_accessible(memory_world: World, palace: PalaceProcess, browser: Browser) -> None:
    """One h1, headings in order, a label for every form field, no link without text, a title
    on every SVG, a language and a title on every page."""
    line = memory_world.line_of(HUMAN, "Wants to be called Sam.")
    addresses = ["", f"why?path={HUMAN}&line={line}", f"why?path={RECORD}&line=1", "why", f"file?path={TEAM}",
                 "log", "log?writer=agent", "at", f"at?date={quote('@' + str(memory_world.facts['before_person']))}",
                 "why?path=nope.md&line=1"]
    for address in addresses:
        dom = open_page(browser, palace, address)
        levels = [int(n.tag[1]) for n in dom.walk() if n.tag in ("h1", "h2", "h3", "h4", "h5", "h6")]
        assert levels.count(1) == 1 and levels[0] == 1, (address, levels)
        assert all(b <= a + 1 for a, b in itertools.pairwise(levels)), (address, levels)
        labelled = {n.attrs.get("for") for n in dom.find_all("label")}
        for field in [n for n in dom.walk() if n.tag in ("input", "select", "textarea")]:
            if field.attrs.get("type") in ("hidden", "submit", "button"):
                continue
            assert field.attrs.get("id") in labelled or field.attrs.get("aria-label"), (address, field.attrs)
        for link in dom.find_all("a"):
            assert link.words() or link.attrs.get("aria-label"), (address, link.attrs)
        for svg in dom.find_all("svg"):
            assert svg.find_all("title") and svg.attrs.get("role") == "img", address
        for img in dom.find_all("img"):
            assert "alt" in img.attrs, address
        assert dom.find("html").attrs.get("lang") == "en"
        assert dom.find("title").words()
    assert palace.process.poll() is None  # still serving after every page
