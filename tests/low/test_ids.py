"""Ids are whole strings of ASCII. A pattern anchored with `$` also matches before a trailing
newline, so `ada\\n` once passed for an agent id, `m\\n` for a message id and `<sha>\\n` for a
commit; `\\d` matches any script's digits. Every pattern that checks an id refuses a trailing
newline, a trailing space and lookalike code points (Cyrillic 'а', fullwidth digits, U+200B),
and so do the commands, tools and receivers that take ids: one line saying what is wrong, with
the lookalike spelled out, never a traceback."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests
from flask.testing import FlaskClient
from mcp import Client

from bot import identity
from bot.commands.localhub import LOCALHUB_BAD_REPOSITORY
from bot.contracts import dream_id_of_branch, is_dream_id
from bot.errors import MemrepoError
from bot.mcp.server import MemoryServer, Options
from bot.memfs.store.repo import MemoryRepo
from bot.notify.events import HeadEvent
from bot.pullrequest.provenance import Change, Provenance, TranscriptRange, from_data
from bot.pullrequest.target import forge_target
from bot.settings import is_repo_name
from bot.transcript import TranscriptStore
from bot.transcript.model import check_id, check_source
from tests.conftest import run_cli
from tests.mcp.test_mcp import serve, text
from tests.webhooks.deliveries import REPO, deliver, make_settings, push
from tests.webhooks.test_event_stream import ReceiverServer, receiver  # noqa: F401
from webhooks.intake import create_app
from webhooks.intake.routing import WEBHOOK_BAD_PAYLOAD, route

CYRILLIC = str.maketrans("aceopx", "асеорх")  # each the Latin letter's twin
FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
SHA = "0123456789abcdef" * 2 + "01234567"
DREAM = "20240102T030405Z-0a1b2c3d"


def lookalikes(good: str) -> list[str]:
    """`good` with a trailing newline, a trailing space, a zero-width space inside, its first
    letter that has a Cyrillic twin swapped for it, and its digits made fullwidth."""
    found = [good + "\n", good + " ", good[:1] + "\u200b" + good[1:]]
    twin = next((i for i, c in enumerate(good) if c in "aceopx"), None)
    if twin is not None:
        found.append(good[:twin] + good[twin].translate(CYRILLIC) + good[twin + 1:])
    if good.translate(FULLWIDTH) != good:
        found.append(good.translate(FULLWIDTH))
    return found


def accepts(check: Callable[[str], object], value: str) -> bool:
    """Whether `check` takes `value`: it answers something, neither a refusal nor a falsy one."""
    try:
        return bool(check(value))
    except (MemrepoError, ValueError):
        return False


def _provenance(base_commit: str) -> Provenance:
    data = Provenance(dream_id=DREAM, agent_id="a1", conversation_id="c1", base_commit=SHA, trigger="manual",
                      strategy="verbatim", model=None,
                      transcript=TranscriptRange("m_1", "m_2", "2026-03-14T09:30:12.000000Z",
                                                 "2026-03-14T09:31:12.000000Z", 2),
                      changes=(Change("conversations/c1/2026-03.md", "Record 1 statement", ("m_1",)),)).as_data()
    return from_data({**data, "base_commit": base_commit})


SETTINGS = make_settings("redis://127.0.0.1:1", repos=None)
REMOTE = "git@github.com:octo/memory.git"

# (what, the check, a value it accepts, the values it must refuse)
TABLE: list[tuple[str, Callable[[str], object], str, list[str]]] = [
    ("agent_id", lambda v: check_id(v, "agent_id"), "ada-7", lookalikes("ada-7")),
    ("conversation_id", lambda v: check_id(v, "conversation_id"), "conv.2024", lookalikes("conv.2024")),
    ("message_id", lambda v: check_id(v, "message_id"), "m_01HZX3A", lookalikes("m_01HZX3A")),
    ("commit author's agent id", identity.check_agent_id, "ada-7", [*lookalikes("ada-7"), "a..b"]),
    ("dream id", is_dream_id, DREAM, lookalikes(DREAM)),
    ("dream branch", dream_id_of_branch, f"memrepo/dream/{DREAM}", lookalikes(f"memrepo/dream/{DREAM}")),
    ("repository", is_repo_name, "octo-cat/memory.1", lookalikes("octo-cat/memory.1")),
    ("tool source", check_source, "tool:web_search2", lookalikes("tool:web_search2")),
    ("external source", check_source, "external:https://example.org/a",
     ["external:https://example.org/a\n", "external:https://example.org/a "]),
    ("head event sha", lambda v: HeadEvent("alice/memory", v, None, "push"), SHA, lookalikes(SHA)),
    ("provenance base_commit", _provenance, SHA, lookalikes(SHA)),
    ("push after", lambda v: route("push", push(after=v), SETTINGS), SHA, lookalikes(SHA)),
    ("forge remote", lambda v: forge_target(v, {}), REMOTE,
     [REMOTE + "\n", REMOTE + " ", "git@github.com:осто/memory.git", "git@github.com:octo/mem\u200bory.git"]),
]


@pytest.mark.parametrize(("check", "good", "bad"), [row[1:] for row in TABLE], ids=[row[0] for row in TABLE])
def test_each_id_pattern_takes_the_whole_string_in_ascii(check: Callable[[str], object], good: str,
                                                         bad: list[str]) -> None:
    assert accepts(check, good)
    assert [value for value in bad if accepts(check, value)] == []


def test_a_refusal_spells_the_lookalike_out() -> None:
    with pytest.raises(MemrepoError) as refused:
        check_id("аda", "agent_id")
    assert str(refused.value).startswith("agent_id '\\u0430da' is not valid: use 1-64 ASCII letters")


# ------------------------------------------------------------------------------ through the commands
def one_line_refusal(code: int, out: str, err: str, words: str) -> None:
    assert (code, out) == (1, "")
    assert err.startswith("memrepo: ") and err.count("\n") == 1 and "Traceback" not in err
    assert words in err


BAD_IDS = lookalikes("ada")


@pytest.mark.parametrize("field", ["--agent", "--conversation"])
def test_transcript_append_refuses_each_lookalike_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str) -> None:
    for bad in BAD_IDS:
        ids = {"--agent": "ada", "--conversation": "c1", field: bad}
        code, out, err = run_cli(capsys, "transcript", "append", "--home", str(tmp_path / "home"),
                                 "--agent", ids["--agent"], "--conversation", ids["--conversation"],
                                 "--kind", "user", "--text", "hi")
        one_line_refusal(code, out, err, f"{field.removeprefix('--')}_id {bad!a} is not valid")
    assert not any((tmp_path / "home").rglob("*.jsonl"))


@pytest.mark.parametrize("field", ["agent_id", "conversation_id", "message_id"])
def test_transcript_import_refuses_each_lookalike_and_imports_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str) -> None:
    rows = tmp_path / "rows.jsonl"
    good = {"agent_id": "ada", "conversation_id": "c1", "message_id": "m1", "kind": "user", "text": "hi"}
    rows.write_text("".join(json.dumps({**good, field: bad}) + "\n" for bad in BAD_IDS))
    code, out, err = run_cli(capsys, "transcript", "import", "--home", str(tmp_path / "home"), str(rows))
    assert (code, out) == (1, "") and "Traceback" not in err
    for line, bad in enumerate(BAD_IDS, 1):
        assert f"line {line}: {field} {bad!a} is not valid" in err
    assert not any((tmp_path / "home").rglob("*.jsonl"))


@pytest.mark.parametrize("field", ["--agent", "--conversation"])
def test_dream_refuses_each_lookalike_before_anything_else(memory: MemoryRepo, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str], field: str) -> None:
    with TranscriptStore(tmp_path / "home", fsync=False) as store:
        store.append("a1", "c1", "user", "I like tea")
    for bad in lookalikes("c1"):
        ids = {"--agent": "a1", "--conversation": "c1", field: bad}
        code, out, err = run_cli(capsys, "dream", "--repo", str(memory.root), "--home", str(tmp_path / "home"),
                                 "--agent", ids["--agent"], "--conversation", ids["--conversation"])
        one_line_refusal(code, out, err, f"{field.removeprefix('--')}_id {bad!a} is not valid")


@pytest.mark.parametrize("field", ["--agent-id", "--conversation"])
def test_tool_refuses_each_lookalike_and_commits_nothing(memory: MemoryRepo, capsys: pytest.CaptureFixture[str],
                                                         field: str) -> None:
    before = memory.head_sha()
    call = json.dumps({"command": "insert", "path": "system/human.md", "insert_line": -1,
                       "insert_text": "- likes tea", "reason": "Remember the tea"})
    for bad in lookalikes("c1"):
        code, out, err = run_cli(capsys, "tool", "--no-push", "--repo", str(memory.root), field, bad, call)
        name = "agent_id" if field == "--agent-id" else "conversation_id"
        one_line_refusal(code, out, err, f"{name} {bad!a} is not valid")
    assert memory.head_sha() == before


def test_init_refuses_each_lookalike_agent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for number, bad in enumerate(BAD_IDS):
        code, out, err = run_cli(capsys, "init", str(tmp_path / f"m{number}"), "--agent-id", bad)
        one_line_refusal(code, out, err, f"agent_id {bad!a} is not valid")


def test_localhub_create_repo_refuses_each_lookalike(capsys: pytest.CaptureFixture[str]) -> None:
    for bad in lookalikes("octo/memory"):
        code, out, err = run_cli(capsys, "localhub", "create-repo", bad, "--url", "http://127.0.0.1:1")
        one_line_refusal(code, out, err, LOCALHUB_BAD_REPOSITORY.format(value=bad))


# ------------------------------------------------------------------------------ through MCP
def test_the_mcp_server_refuses_each_lookalike_conversation(memory: MemoryRepo, tmp_path: Path) -> None:
    for bad in lookalikes("c1"):
        with pytest.raises(MemrepoError, match=re.escape(f"conversation_id {bad!a} is not valid")):
            MemoryServer(Options(repo=memory.root, home=str(tmp_path / "home"), conversation=bad))


def test_mcp_tools_refuse_each_lookalike_id(memory: MemoryRepo, tmp_path: Path) -> None:
    async def body(client: Client, app: MemoryServer) -> list[Any]:
        await client.call_tool("memory_record", {"kind": "user", "text": "I like tea"})
        found = []
        for bad in lookalikes("c1"):
            found.append(await client.call_tool("memory_search", {"query": "tea", "conversation": bad}))
        for bad in lookalikes("tool:web_search2"):
            found.append(await client.call_tool("memory_record", {"kind": "tool_result", "text": "x", "source": bad}))
        return found

    results = serve(memory, tmp_path, body=body, record=True)
    bad = [*lookalikes("c1"), *lookalikes("tool:web_search2")]
    assert [r.is_error for r in results] == [True] * len(bad)
    for result, value in zip(results, bad, strict=True):
        said = text(result)
        assert "\n" not in said and "Traceback" not in said
        assert f"conversation_id {value!a} is not valid" in said or f"source {value!a}" in said


# ------------------------------------------------------------------------------ through the receiver
@pytest.fixture
def client(redis_url: str) -> FlaskClient:
    return create_app(make_settings(redis_url)).test_client()


def test_a_push_whose_sha_ends_in_a_newline_is_400(client: FlaskClient) -> None:
    for bad in lookalikes(SHA):
        resp = deliver(client, "push", push(after=bad))
        assert resp.status_code == 400
        assert resp.json == {"message": WEBHOOK_BAD_PAYLOAD.format(event="push", field="after")}


def test_an_event_stream_path_ending_in_a_newline_is_no_stream(receiver: ReceiverServer) -> None:  # noqa: F811
    assert requests.get(f"{receiver.url}/v1/repos/{REPO}/events", timeout=10).status_code == 401
    assert requests.get(f"{receiver.url}/v1/repos/{REPO}/events%0A", timeout=10).status_code == 404
