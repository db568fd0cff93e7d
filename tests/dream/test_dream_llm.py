"""The llm strategy: the request it sends, the answers it accepts, and every way an
OpenAI-compatible endpoint can fail or misbehave (`responses` plays the endpoint). Malformed
or hostile answers fail the dream cleanly: no pull request, the cursor unchanged, nothing
left behind; a good answer becomes a pull request like any other dream."""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests
import responses

from bot.config import Policy
from bot.dream import triggers
from bot.dream.strategies import DreamInput, get_strategy
from bot.dream.strategies.llm import LlmStrategy, build_request, endpoint, parse_answer
from bot.errors import MemrepoError
from bot.pullrequest.provenance import parse_provenance
from bot.transcript import Message
from tests.dream.test_dream_run import World, world  # noqa: F401  (the localhub fixture)

URL = "http://llm.test/v1"
COMPLETIONS = URL + "/chat/completions"
KEY = "sk-test-secret-key"
SHA = "0123456789abcdef0123456789abcdef01234567"


def msg(n: int, text: str = "I live in Berlin.", kind: str = "user", source: str = "user") -> Message:
    return Message(f"m_{n:026d}", "a1", "c1", kind, source, "2026-03-14T09:30:12.000000Z", text)


WINDOW = (msg(1), msg(2, "Noted.", "assistant", "agent"), msg(3, "I moved to Paris."))
DREAM = DreamInput("a1", "c1", WINDOW, {"system/human.md": "---\ndescription: the person\n---\nNothing.\n",
                                         "reference/x.md": "---\ndescription: x\n---\nx\n",
                                         ".memrepo/config.yml": "merge: auto\n"},
                   Policy(merge_instructions="Prefer the newer statement."), SHA)


def answer(calls: list[dict[str, Any]] | Any, summary: str = "Record where the person lives.") -> str:
    return json.dumps({"summary": summary, "calls": calls})


def completion(content: str) -> dict[str, Any]:
    return {"id": "x", "object": "chat.completion", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}


GOOD_CALL = {"command": "str_replace", "path": "system/human.md", "old_str": "Nothing.",
             "new_str": "Until 2026-03: lives in Berlin.\nSince 2026-03: lives in Paris.",
             "reason": "The person moved", "message_ids": [WINDOW[0].message_id, WINDOW[2].message_id]}


# ---------------------------------------------------------------------------- the request
def test_the_request_carries_instructions_memory_and_transcript() -> None:
    body = build_request(DREAM, "m1")
    assert body["model"] == "m1" and body["response_format"] == {"type": "json_object"}
    assert body["messages"][0]["role"] == "system" and "message_ids" in body["messages"][0]["content"]
    data = json.loads(body["messages"][1]["content"])
    assert data["merge_instructions"] == "Prefer the newer statement."
    assert [f["path"] for f in data["memory"]] == ["system/human.md", "reference/x.md"]  # no .memrepo/
    assert [m["message_id"] for m in data["transcript"]] == [m.message_id for m in WINDOW]
    assert data["transcript"][1]["source"] == "agent"
    assert endpoint(URL) == COMPLETIONS and endpoint(COMPLETIONS) == COMPLETIONS


# ---------------------------------------------------------------------------- the answers
def test_a_good_answer_is_a_proposal_with_message_ids() -> None:
    proposal = parse_answer(answer([GOOD_CALL]), DREAM, "m1")
    assert proposal.model == "m1" and proposal.summary == "Record where the person lives."
    (call,) = proposal.calls
    assert call.summary == "The person moved"
    assert call.message_ids == (WINDOW[0].message_id, WINDOW[2].message_id)
    assert "message_ids" not in call.call
    assert parse_answer("```json\n" + answer([]) + "\n```", DREAM, "m1").calls == ()


def _with(**changes: Any) -> dict[str, Any]:
    call = {k: v for k, v in GOOD_CALL.items() if k not in changes or changes[k] is not None}
    call.update({k: v for k, v in changes.items() if v is not None})
    return call


@pytest.mark.parametrize("content, problem", [
    ("", "empty"),
    ("Sure! Here are the edits: ...", "not JSON"),
    ("[1, 2]", "expected a JSON object"),
    (json.dumps({"calls": []}), "summary must be non-empty"),
    (json.dumps({"summary": "s", "calls": {}}), "calls must be a list"),
    (json.dumps({"summary": "s", "calls": [], "shell": "rm -rf /"}), "unknown key shell"),
    (answer(["create a file"]), "call 1 must be an object"),
    (answer([_with(message_ids=[])]), "message_ids must be a non-empty list"),
    (answer([_with(message_ids=["m_made_up"])]), "'m_made_up' is not in the transcript"),
    (answer([_with(command="format_disk")]), "format_disk"),
    (answer([{"command": "create", "path": ".memrepo/cursors/a1/c1.json", "file_text": "{}", "reason": "r",
              "message_ids": [WINDOW[0].message_id]}]), ".memrepo/"),
    (answer([{"command": "create", "path": "../escape.md", "file_text": "x", "reason": "r",
              "message_ids": [WINDOW[0].message_id]}]), "'..'"),
    (answer([{"command": "create", "path": "/etc/passwd", "file_text": "x", "reason": "r",
              "message_ids": [WINDOW[0].message_id]}]), "absolute"),
    (answer([{"command": "create", "path": ".github/workflows/x.yml", "file_text": "x", "reason": "r",
              "message_ids": [WINDOW[0].message_id]}]), ".github/"),
    (answer([{"command": "rename", "old_path": "system/human.md", "new_path": "../../out", "reason": "r",
              "message_ids": [WINDOW[0].message_id]}]), "'..'"),
    (answer([{"command": "view", "path": "system", "reason": "r", "message_ids": [WINDOW[0].message_id]}]),
     "not an edit"),
    (answer([_with(reason=None)]), "reason"),
    (answer([GOOD_CALL] * 51), "more than the 50"),
])
def test_malformed_and_hostile_answers_are_refused_whole(content: str, problem: str) -> None:
    with pytest.raises(MemrepoError) as info:
        parse_answer(content, DREAM, "m1")
    assert str(info.value).startswith("the LLM's answer is not valid memory tool calls")
    assert problem in str(info.value)


# ------------------------------------------------------------------------- the endpoint
@responses.activate
def test_the_endpoint_is_asked_once_with_the_key_and_the_answer_is_parsed() -> None:
    responses.post(COMPLETIONS, json=completion(answer([GOOD_CALL])))
    strategy = LlmStrategy(URL, "m1", KEY, timeout=5)
    proposal = strategy.propose(DREAM)
    assert len(proposal.calls) == 1
    (sent,) = responses.calls
    assert sent.request.headers["Authorization"] == f"Bearer {KEY}"
    assert json.loads(sent.request.body)["model"] == "m1"
    assert KEY not in repr(strategy)


@pytest.mark.parametrize("reply, problem", [
    ({"status": 500, "body": f"internal error; key was {KEY}"}, "answered HTTP 500"),
    ({"status": 401, "json": {"error": "bad key"}}, "answered HTTP 401"),
    ({"body": requests.exceptions.ReadTimeout("slow")}, "did not answer within 5s"),
    ({"body": requests.exceptions.ConnectionError("refused")}, "cannot be reached"),
    ({"json": {"choices": []}}, "no choices[0].message.content"),
    ({"body": "<html>not json</html>"}, "no choices[0].message.content"),
    ({"json": completion("I think you should remember Paris.")}, "not JSON"),
])
def test_endpoint_failures_are_one_clear_line_without_the_key(reply: dict[str, Any], problem: str) -> None:
    with responses.RequestsMock() as mock:
        mock.post(COMPLETIONS, **reply)
        with pytest.raises(MemrepoError) as info:
            LlmStrategy(URL, "m1", KEY, timeout=5).propose(DREAM)
    text = str(info.value)
    assert problem in text and KEY not in text and "\n" not in text


def test_configuration_comes_from_the_environment() -> None:
    with pytest.raises(MemrepoError, match="MEMREPO_LLM_URL"):
        LlmStrategy.from_env({})
    with pytest.raises(MemrepoError, match="MEMREPO_LLM_TIMEOUT"):
        LlmStrategy.from_env({"MEMREPO_LLM_URL": URL, "MEMREPO_LLM_MODEL": "m", "MEMREPO_LLM_TIMEOUT": "soon"})
    s = LlmStrategy.from_env({"MEMREPO_LLM_URL": URL + "/", "MEMREPO_LLM_MODEL": "m", "OPENAI_API_KEY": "k2",
                              "MEMREPO_LLM_TIMEOUT": "7"})
    assert (s.url, s.model, s.timeout) == (COMPLETIONS, "m", 7.0)
    with pytest.raises(MemrepoError, match="unknown dream strategy 'magic'"):
        get_strategy("magic")


# ------------------------------------------------------------------- whole dreams (localhub)
@pytest.fixture
def llm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMREPO_LLM_URL", URL)
    monkeypatch.setenv("MEMREPO_LLM_MODEL", "test-model")
    monkeypatch.setenv("MEMREPO_LLM_API_KEY", KEY)


def _dream_with(world: World, content: str) -> Any:  # noqa: F811
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        mock.add_passthru(world.server.url)
        mock.post(COMPLETIONS, json=completion(content))
        return world.dream(strategy="llm")


def test_an_llm_dream_keeps_the_superseded_value_and_opens_a_pull_request(world: World, llm_env: None  # noqa: F811
                                                                         ) -> None:
    berlin, paris = world.say("I live in Berlin."), world.say("I moved to Paris last week.")
    call = {"command": "str_replace", "path": "system/human.md", "old_str": "Nothing recorded yet.",
            "new_str": "Until 2026-03: lives in Berlin.\nSince 2026-03: lives in Paris.",
            "reason": "The person moved from Berlin to Paris", "message_ids": [berlin.message_id, paris.message_id]}
    result = _dream_with(world, answer([call], "The person moved; both places are kept with their periods."))
    assert result.status == triggers.OPENED
    pr = world.client().get_pull_request(result.pr)
    p = parse_provenance(pr.body)
    assert (p.strategy, p.model) == ("llm", "test-model")
    assert [(c.path, c.message_ids) for c in p.changes] == [("system/human.md", (berlin.message_id,
                                                                                 paris.message_id))]
    head = world.branch_commit(pr.head_ref)
    human = world.memory.read("system/human.md", head).decode()
    assert "Until 2026-03: lives in Berlin." in human and "Since 2026-03: lives in Paris." in human
    assert world.memory.read(".memrepo/cursors/a1/c1.json", head) is not None
    assert "test-model" in pr.body


@pytest.mark.parametrize("content", [
    "not json at all",
    answer([{"command": "create", "path": ".memrepo/cursors/a1/c1.json", "reason": "move the cursor",
             "file_text": '{"through_message_id": "m_x"}', "message_ids": ["PLACEHOLDER"]}]),
    answer([{"command": "create", "path": "../escape.md", "file_text": "x", "reason": "r",
             "message_ids": ["PLACEHOLDER"]}]),
    # valid JSON and paths, but the memory tool refuses it: system/ files need a description
    answer([{"command": "create", "path": "system/new.md", "file_text": "no frontmatter", "reason": "r",
             "message_ids": ["PLACEHOLDER"]}]),
])
def test_an_invalid_llm_answer_opens_nothing_and_leaves_the_cursor(world: World, llm_env: None,  # noqa: F811
                                                                  content: str) -> None:
    said = world.say("I live in Berlin.")
    with pytest.raises(MemrepoError) as info:
        _dream_with(world, content.replace("PLACEHOLDER", said.message_id))
    assert "nothing was opened and the cursor is unchanged" in str(info.value)
    assert KEY not in str(info.value)
    world.assert_nothing_left()
    assert world.cursor_on_main() is None


def test_an_llm_endpoint_that_is_down_opens_nothing(world: World, llm_env: None) -> None:  # noqa: F811
    world.say("I live in Berlin.")
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        mock.add_passthru(world.server.url)
        mock.post(COMPLETIONS, status=500, body="upstream error")
        with pytest.raises(MemrepoError, match="answered HTTP 500"):
            world.dream(strategy="llm")
    world.assert_nothing_left()
