"""JSON nested 200,000 levels, at every public entry point that reads JSON: one line refusing it
(an exit code of 1, a tool error, a 400, a JSON-RPC error), never exit 70 "internal error" from
a RecursionError inside json.loads. bot/bounded_json.py measures the depth before parsing;
tests/webhooks/test_receiver_input.py holds the webhook receiver to the same bound and property-tests
the scan against json.loads."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from bot.bounded_json import JSON_TOO_DEEP, MAX_DEPTH, TooDeepError, loads_bounded, nesting_depth, too_deep
from bot.dream.cursor import CursorError, parse_cursor
from bot.dream.state import parse_state
from bot.dream.strategies.llm import parse_answer
from bot.errors import MemrepoError
from bot.memfs.store.repo import MemoryRepo
from bot.notify.events import HeadEvent
from bot.transcript import TranscriptStore
from tests.conftest import run_cli
from tests.dream.test_dream_llm import DREAM
from tests.mcp.test_mcp_auth import ACCEPT, INITIALIZE
from tests.mcp.test_mcp_transports import TIMEOUT, HttpServer, command

DEEP = 200_000


def nested(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


def deep_call(depth: int = DEEP) -> str:
    """A memory tool call whose `path` nests `depth` arrays."""
    return '{"command": "view", "path": ' + nested(depth) + "}"


def too_deep_said(what: str) -> str:
    return JSON_TOO_DEEP.format(what=what, limit=MAX_DEPTH)


def refused(code: int, out: str, err: str, words: str) -> None:
    """`memrepo tool`'s refusal: exit 1 and its message alone, as for any call it refuses."""
    assert (code, out, err) == (1, "", words + "\n")


# ------------------------------------------------------------------------------ the helper
@pytest.mark.parametrize(("text", "depth"), [
    ("1", 0), ('"[[[["', 0), ("[]", 1), ('{"a": [1, {"b": []}]}', 4), ('["]", "\\"[", [[]]]', 3),
    (nested(MAX_DEPTH), MAX_DEPTH), (nested(DEEP), DEEP),
])
def test_the_depth_of_json_text(text: str, depth: int) -> None:
    assert nesting_depth(text) == depth
    assert too_deep(text) is (depth > MAX_DEPTH)


def test_loads_bounded_parses_up_to_the_bound_and_refuses_beyond_it() -> None:
    assert loads_bounded(nested(MAX_DEPTH)) == json.loads(nested(MAX_DEPTH))
    assert loads_bounded(nested(3).encode("utf-16")) == [[[1]]]
    for text in (nested(MAX_DEPTH + 1), nested(DEEP), nested(DEEP).encode()):
        with pytest.raises(TooDeepError, match="the call nests arrays and objects deeper than 64 levels"):
            loads_bounded(text, what="the call")
    assert issubclass(TooDeepError, MemrepoError) and issubclass(TooDeepError, ValueError)


# ------------------------------------------------------------------------------ memrepo tool
def test_tool_refuses_a_deep_call_given_as_the_argument(memory: MemoryRepo,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "tool", "--no-push", "--repo", str(memory.root), deep_call())
    refused(code, out, err, too_deep_said("the tool call"))


def test_tool_refuses_a_deep_call_read_from_standard_input(memory: MemoryRepo, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(deep_call().encode())))
    code, out, err = run_cli(capsys, "tool", "--no-push", "--repo", str(memory.root), "-")
    refused(code, out, err, too_deep_said("the tool call"))


def test_tool_refuses_deep_arguments_sent_as_json_text(memory: MemoryRepo,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    call = json.dumps({"name": "memory", "arguments": deep_call()})
    code, out, err = run_cli(capsys, "tool", "--no-push", "--repo", str(memory.root), call)
    refused(code, out, err, too_deep_said("the text of the tool call's arguments"))


# ------------------------------------------------------------------------------ transcripts
def test_transcript_import_refuses_a_deep_row_and_imports_nothing(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    rows = tmp_path / "rows.jsonl"
    good = {"agent_id": "ada", "conversation_id": "c1", "kind": "user", "text": "hi"}
    rows.write_text(json.dumps(good) + "\n" + nested(DEEP) + "\n")
    code, out, err = run_cli(capsys, "transcript", "import", "--home", str(tmp_path / "home"), str(rows))
    assert (code, out) == (1, "") and "Traceback" not in err and "internal error" not in err
    assert f"line 2: {too_deep_said('the row')}" in err
    assert not any((tmp_path / "home").rglob("*.jsonl"))


def test_transcript_import_from_standard_input_refuses_a_deep_row(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((nested(DEEP) + "\n").encode())))
    code, out, err = run_cli(capsys, "transcript", "import", "--home", str(tmp_path / "home"), "-")
    assert (code, out) == (1, "") and "Traceback" not in err
    assert f"line 1: {too_deep_said('the row')}" in err


def test_a_deep_line_in_a_log_is_a_damaged_log_not_a_crash(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    with TranscriptStore(tmp_path / "home", fsync=False) as store:
        store.append("ada", "c1", "user", "I like tea")
    [log] = (tmp_path / "home").rglob("c1.jsonl")
    with log.open("a") as f:
        f.write(nested(DEEP) + "\n")
    code, out, err = run_cli(capsys, "transcript", "rebuild", "--home", str(tmp_path / "home"))
    assert (code, out) == (1, "") and "Traceback" not in err and "internal error" not in err
    assert f"{log}, line 2" in err and too_deep_said("the line") in err


# ------------------------------------------------------------------------------ what dreams read
def test_deep_dream_files_and_answers_are_refused_by_name() -> None:
    with pytest.raises(MemrepoError, match="the dream state nests"):
        parse_state(nested(DEEP).encode(), Path("dreams/a1/c1.json"))
    with pytest.raises(CursorError, match="the cursor nests"):
        parse_cursor(nested(DEEP).encode(), ".memrepo/cursors/a1/c1.json")
    with pytest.raises(MemrepoError, match="the answer nests"):
        parse_answer(nested(DEEP), DREAM, "m1")


def test_a_deep_head_event_is_refused_by_name() -> None:
    with pytest.raises(MemrepoError, match="the event nests"):
        HeadEvent.from_json(nested(DEEP))


# ------------------------------------------------------------------------------ memrepo validate
def test_validate_refuses_a_deep_memfs_config(memory: MemoryRepo, capsys: pytest.CaptureFixture[str]) -> None:
    (memory.root / ".memfs.config.json").write_text('{"version": 1, "x": ' + nested(DEEP) + "}\n")
    code, out, err = run_cli(capsys, "validate", "--repo", str(memory.root))
    assert code == 1 and "Traceback" not in out + err and "internal error" not in err
    assert too_deep_said("the config") in out + err


# ------------------------------------------------------------------------------ MCP
def rpc(ident: int, arguments: str) -> str:
    return (f'{{"jsonrpc": "2.0", "id": {ident}, "method": "tools/call", "params": {{"name": "memory_view", '
            f'"arguments": {{"path": {arguments}}}}}}}')


def test_mcp_over_stdio_answers_a_deep_message_with_an_error_and_goes_on(memory: MemoryRepo, tmp_path: Path) -> None:
    lines = [json.dumps(INITIALIZE), '{"jsonrpc": "2.0", "method": "notifications/initialized"}',
             rpc(2, nested(DEEP)), rpc(3, '"system"')]
    server = subprocess.Popen(command(memory, tmp_path), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write("\n".join(lines) + "\n")
        server.stdin.flush()
        answers = {}
        while 3 not in answers:  # the server stops at end of input, so input stays open until then
            answer = json.loads(server.stdout.readline())
            answers[answer.get("id")] = answer
    finally:
        _, err = server.communicate(timeout=TIMEOUT)
    assert server.returncode == 0 and "Traceback" not in err
    assert answers[None]["error"]["code"] == -32700
    assert answers[None]["error"]["message"] == ("not a JSON-RPC message memrepo can read: the message nests arrays "
                                                 f"and objects deeper than {MAX_DEPTH} levels, more than memrepo reads")
    assert "persona" in json.dumps(answers[3]["result"])


def test_mcp_over_http_answers_a_deep_message_400_and_goes_on(memory: MemoryRepo, tmp_path: Path) -> None:
    server = HttpServer(command(memory, tmp_path, "--http", "0"))
    try:
        deep = requests.post(server.url, data=rpc(2, nested(DEEP)), headers=ACCEPT, timeout=TIMEOUT)
        assert deep.status_code == 400
        assert deep.json()["error"]["code"] == -32700 and f"deeper than {MAX_DEPTH}" in deep.json()["error"]["message"]
        assert requests.post(server.url, json=INITIALIZE, headers=ACCEPT, timeout=TIMEOUT).status_code == 200
    finally:
        _, _, err = server.stop()
    assert "Traceback" not in err
