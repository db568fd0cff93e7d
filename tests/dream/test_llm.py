"""The shared chat completion client: its pure parts as tables, and one endpoint played by
`responses` for the ways a call fails (the dreamer's and the resolver's own tests cover their
wording end to end)."""

from __future__ import annotations

from typing import Any

import pytest
import requests
import responses

from bot import llm

URL = "http://llm.test/v1"
CHAT = URL + "/chat/completions"
KEY = "sk-shared-secret"
WORDING = llm.Wording(timeout="T {url} {seconds:g}", unreachable="U {url} {problem}",
                      status="S {url} {status} {answer}", shape="no content")


class Failed(Exception):
    pass


@pytest.mark.parametrize(("url", "expected"), [
    (URL, CHAT),
    (URL + "/", CHAT),
    (CHAT, CHAT),
    (CHAT + "/", CHAT),
    ("http://localhost:8080", "http://localhost:8080/chat/completions"),
])
def test_endpoint(url: str, expected: str) -> None:
    assert llm.endpoint(url) == expected


@pytest.mark.parametrize(("key", "expected"), [
    (None, {"Content-Type": "application/json"}),
    ("", {"Content-Type": "application/json"}),
    ("k", {"Content-Type": "application/json", "Authorization": "Bearer k"}),
])
def test_headers(key: str | None, expected: dict[str, str]) -> None:
    assert llm.headers(key) == expected


@pytest.mark.parametrize(("body", "key", "expected"), [
    ("", KEY, "no body"),
    ("  \n ", KEY, "no body"),
    ("internal\n  error", None, "internal error"),
    (f"bad key {KEY}", KEY, "bad key ***"),
    (f"bad key {KEY}", None, f"bad key {KEY}"),
    ("x" * 300, None, "x" * 200),
])
def test_excerpt(body: str, key: str | None, expected: str) -> None:
    assert llm.excerpt(body, key) == expected


@pytest.mark.parametrize(("answer", "expected"), [
    ({"choices": [{"message": {"content": "hi"}}]}, "hi"),
    ({"choices": [{"message": {"content": None}}]}, None),
    ({"choices": [{"message": {"content": {"summary": "s"}}}]}, {"summary": "s"}),
    ({"choices": [{"message": {"content": "a"}}, {"message": {"content": "b"}}]}, "a"),
])
def test_message_content(answer: Any, expected: Any) -> None:
    assert llm.message_content(answer) == expected


@pytest.mark.parametrize("answer", [
    {}, {"choices": []}, {"choices": [{}]}, {"choices": [{"message": {}}]}, {"choices": None}, [], "text", None,
])
def test_message_content_missing(answer: Any) -> None:
    with pytest.raises(ValueError):
        llm.message_content(answer)


@pytest.mark.parametrize(("text", "expected"), [
    ("```json\n{\"a\": 1}\n```", "{\"a\": 1}\n"),
    ("```\nplain\n```\n", "plain\n"),
    ("```markdown\n---\nd: x\n---\nbody\n```\n", "---\nd: x\n---\nbody\n"),
    ("\n\n```md\nline\n```  \n\n", "line\n"),  # blank lines and spaces around the fence
    ("  ```json\n{}\n  ```  ", "{}\n"),  # indented fences
    ("```json\n{\"a\": 1}```", "{\"a\": 1}\n"),  # the closing fence at the end of the last line
    ("```\r\nx\r\n```\r\n", "x\r\n"),  # CRLF: the fence lines go, the text keeps its line ends
    ("```json\n```", "\n"),  # an empty fence
    ("no fence\n", "no fence\n"),
    ("```json {}```", "```json {}```"),  # one line: not a fence around anything
    ("```json\n{}\nand then some words", "```json\n{}\nand then some words"),  # never closed
    ("Here you go:\n```\nx\n```", "Here you go:\n```\nx\n```"),  # words before the fence
    ("---\nd: x\n---\n```\ncode\n```\n", "---\nd: x\n---\n```\ncode\n```\n"),  # a fence inside a file
    ("", ""),
])
def test_unfenced(text: str, expected: str) -> None:
    assert llm.unfenced(text) == expected


def client(**options: Any) -> llm.ChatClient:
    return llm.ChatClient(URL, KEY, timeout=3, wording=WORDING, error=Failed, **options)


@responses.activate
def test_one_post_with_the_key_returns_the_content() -> None:
    responses.post(CHAT, json={"choices": [{"message": {"content": "merged"}}]})
    assert client().complete({"model": "m"}) == "merged"
    (call,) = responses.calls
    assert call.request.headers["Authorization"] == f"Bearer {KEY}"
    assert call.request.body == b'{"model": "m"}'
    assert KEY not in repr(client())


@pytest.mark.parametrize(("reply", "expected"), [
    ({"status": 503, "body": f"down; key {KEY}"}, f"S {CHAT} 503 down; key ***"),
    ({"status": 404, "body": ""}, f"S {CHAT} 404 no body"),
    ({"body": requests.exceptions.ReadTimeout("slow")}, f"T {CHAT} 3"),
    ({"body": requests.exceptions.ConnectTimeout("slow")}, f"T {CHAT} 3"),
    ({"body": requests.exceptions.ConnectionError(f"refused {KEY}")}, f"U {CHAT} ConnectionError"),
    ({"body": "<html>not json</html>"}, "no content"),
    ({"json": {"choices": []}}, "no content"),
])
def test_every_failure_is_one_line_in_the_callers_words(reply: dict[str, Any], expected: str) -> None:
    with responses.RequestsMock() as mock:
        mock.post(CHAT, **reply)
        with pytest.raises(Failed) as info:
            client().complete({})
    assert str(info.value) == expected
