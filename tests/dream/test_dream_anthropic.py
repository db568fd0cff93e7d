"""The anthropic dream strategy end to end: the SDK's tool runner against a scripted Messages
API (the SDK's HTTP client with a mock transport), memory on localhub over real HTTP and git.
The dreamer works with Claude's memory tool and a transcript search; its accepted edits become
one dream pull request whose provenance names the model and the messages each edit rests on; a
refused edit is retried; a dream that proposes nothing, or that runs past its bounds, opens
nothing and leaves nothing behind."""

from __future__ import annotations

import sys
from typing import Any

import httpx2
import pytest

from bot.config import parse_policy
from bot.dream import triggers
from bot.dream.strategies import get_strategy
from bot.dream.strategies.anthropic import AnthropicStrategy, cited, memory_uses, search
from bot.errors import MemrepoError
from bot.pullrequest.provenance import parse_provenance
from bot.transcript import Message
from tests.agent.test_anthropic_tool import MODEL, ScriptedMessages, reply, text, use
from tests.conftest import git
from tests.dream.test_dream_run import CURSOR, World, world  # noqa: F401  (the localhub fixture)

HUMAN = "/memories/system/human.md"
ANTHROPIC_ENV = ("MEMREPO_ANTHROPIC_MODEL", "MEMREPO_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY",
                 "MEMREPO_ANTHROPIC_BASE_URL", "ANTHROPIC_BASE_URL", "MEMREPO_ANTHROPIC_MAX_TURNS",
                 "MEMREPO_ANTHROPIC_MAX_TOKENS", "MEMREPO_ANTHROPIC_TIMEOUT")
COFFEE = "---\ndescription: How the person takes coffee\n---\nBlack, no sugar.\n"


@pytest.fixture(autouse=True)
def no_anthropic_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ANTHROPIC_ENV:
        monkeypatch.delenv(name, raising=False)


def dream(world: World, api: ScriptedMessages, **bounds: Any) -> Any:  # noqa: F811
    return world.dream(strategy=AnthropicStrategy(MODEL, client=api.client(), **bounds))


def search_for(query: str) -> dict[str, Any]:
    return use({"query": query}, name="search_transcript")


def moved(berlin: Message, paris: Message) -> dict[str, Any]:
    return reply(text(f"The person moved from Berlin to Paris ({berlin.message_id}, {paris.message_id}); "
                      "both places are kept with their periods."),
                 use({"command": "str_replace", "path": HUMAN, "old_str": "Nothing recorded yet.",
                      "new_str": "Until 2026-03: lives in Berlin.\nSince 2026-03: lives in Paris."}))


# ------------------------------------------------------------------------ whole dreams
def test_a_dream_that_edits_two_files_opens_one_pull_request_naming_the_model_and_messages(world: World  # noqa: F811
                                                                                         ) -> None:
    berlin, paris = world.say("I live in Berlin."), world.say("I moved to Paris last week.")
    world.say("Noted.", "assistant")
    coffee = world.say("I take my coffee black, no sugar.")
    api = ScriptedMessages(
        reply(text("Where does the person live?"), search_for("live moved")),
        moved(berlin, paris),
        reply(text(f"How the person takes coffee ({coffee.message_id}) belongs in reference memory."),
              use({"command": "create", "path": "/memories/reference/coffee.md", "file_text": COFFEE})),
        reply(text("Recorded the move to Paris, keeping Berlin with its period, and how the person takes coffee.")))
    result = dream(world, api)

    assert result.status == triggers.OPENED, result.message
    first = api.requests[0]
    assert [t.get("name") for t in first["tools"]] == ["memory", "search_transcript"]
    assert first["tools"][0]["type"] == "memory_20250818"
    assert world.memory.policy().merge_instructions in first["system"]
    assert berlin.message_id in first["messages"][0]["content"]  # a short transcript is shown
    assert "I moved to Paris last week." in first["messages"][0]["content"]
    found, error = api.result(2)
    assert not error and berlin.message_id in found and paris.message_id in found
    assert not api.result(3)[1] and not api.result(4)[1]
    assert "It goes into the dream's pull request (edit 1)" in api.result(3)[0]
    assert api.result(4)[0].startswith("File created successfully at: /memories/reference/coffee.md")

    pr = world.client().get_pull_request(result.pr)
    p = parse_provenance(pr.body)
    assert (p.strategy, p.model) == ("anthropic", MODEL)
    assert [(c.path, c.message_ids) for c in p.changes] == [
        ("system/human.md", (berlin.message_id, paris.message_id)), ("reference/coffee.md", (coffee.message_id,))]
    assert p.changes[0].summary.startswith("The person moved from Berlin to Paris")
    assert "Recorded the move to Paris" in pr.body and MODEL in pr.body
    head = world.branch_commit(pr.head_ref)
    assert "Since 2026-03: lives in Paris." in (world.memory.read("system/human.md", head) or b"").decode()
    assert world.memory.read("reference/coffee.md", head) == COFFEE.encode()
    assert world.memory.read(CURSOR, head) is not None
    assert git(world.memory.root, "log", "-1", "--format=%an <%ae>", head).strip() == \
        f"memrepo dreamer <{result.dream_id}@dreams.memrepo>"


def test_a_dream_that_proposes_nothing_opens_nothing(world: World) -> None:  # noqa: F811
    world.say("Hello!")
    api = ScriptedMessages(reply(search_for("...")), reply(search_for("hello")),
                           reply(text("Nothing here is worth recording.")))
    result = dream(world, api)
    assert api.result(2) == ("the query has no words to search for; give one or more words", True)
    assert not api.result(3)[1] and "Hello!" in api.result(3)[0]
    assert result.status == triggers.NOTHING
    assert "Nothing here is worth recording." in result.message
    world.assert_nothing_left()
    assert world.cursor_on_main() is None


def test_a_refused_edit_is_retried_and_only_the_accepted_one_is_kept(world: World) -> None:  # noqa: F811
    berlin, paris = world.say("I live in Berlin."), world.say("I moved to Paris last week.")
    api = ScriptedMessages(
        reply(text(f"Recording the move ({paris.message_id})."),
              use({"command": "str_replace", "path": HUMAN, "old_str": "Nothing recorded.", "new_str": "Paris."})),
        reply(use({"command": "str_replace", "path": HUMAN, "old_str": "Nothing recorded yet.", "new_str": "Paris."})),
        reply(text(f"The old text is 'Nothing recorded yet.'; recording Berlin and Paris ({berlin.message_id}, "
                   f"{paris.message_id})."),
              use({"command": "create", "path": HUMAN, "file_text": "Paris."})),
        moved(berlin, paris),
        reply(text("Recorded the move.")))
    result = dream(world, api)

    wrong, error = api.result(2)
    assert error and "was not found in system/human.md (0 matches)" in wrong
    unexplained, error = api.result(3)
    assert error and unexplained.startswith("This edit was not made: before each edit, say in your reply's text")
    exists, error = api.result(4)
    assert error and "Nothing recorded yet." in exists  # refused with the file's content
    assert not api.result(5)[1]

    assert result.status == triggers.OPENED, result.message
    p = parse_provenance(world.client().get_pull_request(result.pr).body)
    assert [(c.path, c.message_ids) for c in p.changes] == [("system/human.md", (berlin.message_id,
                                                                                 paris.message_id))]
    human = (world.memory.read("system/human.md", world.branch_commit(f"memrepo/dream/{result.dream_id}"))
             or b"").decode()
    assert "Until 2026-03: lives in Berlin.\nSince 2026-03: lives in Paris." in human
    assert "Nothing recorded yet." not in human


@pytest.mark.parametrize("bounds, replies, problem, requests", [
    ({"max_turns": 2}, [reply(search_for("Berlin")), reply(search_for("Paris")), reply(text("Done."))],
     "was still working after 2 turns", 2),
    ({"max_tokens": 1000}, [reply(search_for("Berlin"), tokens=(900, 50)), reply(text("Done."))],
     "used 1,070 tokens, more than its bound of 1,000", 2),
    ({}, [reply(text("I was cut off mid-"), stop="max_tokens")], "ended with stop reason 'max_tokens'", 2),
])
def test_a_dream_past_its_bounds_opens_nothing(world: World, bounds: dict[str, int],  # noqa: F811
                                               replies: list[dict[str, Any]], problem: str, requests: int) -> None:
    berlin, paris = world.say("I live in Berlin."), world.say("I moved to Paris last week.")
    api = ScriptedMessages(moved(berlin, paris), *replies)
    with pytest.raises(MemrepoError) as info:
        dream(world, api, **bounds)
    assert "failed, nothing was opened and the cursor is unchanged" in str(info.value)
    assert problem in str(info.value) and "none of its edits is kept" in str(info.value)
    assert len(api.requests) == requests  # nothing is asked past the bound
    world.assert_nothing_left()
    assert world.cursor_on_main() is None


def test_an_api_error_is_one_line_without_the_key(world: World) -> None:  # noqa: F811
    world.say("I live in Berlin.")
    api = ScriptedMessages(httpx2.Response(401, json={"type": "error", "error": {
        "type": "authentication_error", "message": "invalid x-api-key"}}))
    with pytest.raises(MemrepoError) as info:
        dream(world, api)
    assert "the Anthropic API answered HTTP 401" in str(info.value) and "sk-ant-test" not in str(info.value)
    assert "\n" not in str(info.value)
    world.assert_nothing_left()


# --------------------------------------------------------------------- configuration
def test_the_strategy_is_configured_from_the_policy_and_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_policy("dream:\n  strategy: anthropic\n").dream.strategy == "anthropic"
    with pytest.raises(MemrepoError, match="MEMREPO_ANTHROPIC_MODEL"):
        get_strategy("anthropic")
    monkeypatch.setenv("MEMREPO_ANTHROPIC_MODEL", MODEL)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("MEMREPO_ANTHROPIC_MAX_TURNS", "7")
    chosen = get_strategy("anthropic")
    assert isinstance(chosen, AnthropicStrategy)
    assert (chosen.model, chosen.max_turns, chosen.max_tokens) == (MODEL, 7, 400_000)
    assert "sk-ant-secret" not in repr(chosen)
    monkeypatch.setenv("MEMREPO_ANTHROPIC_MAX_TOKENS", "lots")
    with pytest.raises(MemrepoError, match="MEMREPO_ANTHROPIC_MAX_TOKENS must be a positive whole number"):
        get_strategy("anthropic")
    monkeypatch.setenv("MEMREPO_ANTHROPIC_MAX_TOKENS", "1000")
    monkeypatch.setenv("MEMREPO_ANTHROPIC_TIMEOUT", "-1")
    with pytest.raises(MemrepoError, match="MEMREPO_ANTHROPIC_TIMEOUT"):
        get_strategy("anthropic")


def test_without_the_sdk_the_strategy_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in sys.modules if n == "anthropic" or n.startswith("anthropic.")
                 or n in ("bot.agent.anthropic", "bot.anthropic_memory", "bot.dream.strategies.anthropic")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(MemrepoError, match=r"pip install 'memrepo\[anthropic\]'"):
        get_strategy("anthropic")


# ------------------------------------------------------------------------ pure parts
def _m(n: int, words: str, kind: str = "user") -> Message:
    return Message(f"m_{n:026d}", "a1", "c1", kind, "user", "2026-03-14T09:30:12.000000Z", words)


def test_search_ranks_the_window_by_bm25() -> None:
    window = (_m(1, "I live in Berlin."), _m(2, "The weather is nice."), _m(3, "I moved to Paris; Paris is lovely."),
              _m(4, "회사에서 메모리를 샀어요"))
    assert [m.message_id for m, _ in search(window, "Paris")] == [window[2].message_id]
    assert [m.message_id for m, _ in search(window, "living in paris")][:2] == [window[2].message_id,
                                                                               window[0].message_id]
    assert [m.message_id for m, _ in search(window, "메모리")] == [window[3].message_id]
    assert search(window, "...") == [] and search(window, "Tokyo") == []
    assert len(search(window, "I", k=2)) == 2


def test_the_ids_an_edit_rests_on_come_from_the_text_that_explains_it() -> None:
    known = {"m_1", "m_12", "m_3"}
    assert cited("As m_12 says (and m_1.), not m_9; m_12 again.", known) == ("m_12", "m_1")

    class Block:
        def __init__(self, **fields: Any) -> None:
            self.__dict__.update(fields)

    content = [Block(type="text", text="Search first."), Block(type="tool_use", name="search_transcript", input={}),
               Block(type="text", text="Because of m_3."), Block(type="tool_use", name="memory", input={"a": 1}),
               Block(type="tool_use", name="memory", input={"b": 2})]
    assert memory_uses(content) == [({"a": 1}, "Because of m_3."), ({"b": 2}, "Because of m_3.")]
    alone = [Block(type="tool_use", name="memory", input={"c": 3}), Block(type="text", text="Per m_1.")]
    assert memory_uses(alone) == [({"c": 3}, "Per m_1.")]
