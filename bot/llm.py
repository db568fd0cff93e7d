"""One client for OpenAI-compatible chat completion endpoints, used by the dreamer's llm
strategy and the integrator's LLM resolver.

Pure parts first (the endpoint's address, the headers, the key kept out of every message,
the first choice's content in an answer, a Markdown fence taken off a reply); then
`ChatClient`, which makes one POST and turns every way it can fail into one line in the
caller's words and exception type. No retry: a dream or a resolution that fails is tried
again by its own caller, later, as a whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import requests

COMPLETIONS_PATH = "/chat/completions"
EXCERPT_CHARS = 200  # of an error answer's body, in the message
NO_BODY = "no body"
FENCE = "```"


# ----------------------------------------------------------------------------------- pure
def endpoint(url: str) -> str:
    """The completions URL from a base URL (`http://host/v1`) or the full one."""
    url = url.rstrip("/")
    return url if url.endswith(COMPLETIONS_PATH) else url + COMPLETIONS_PATH


def headers(key: str | None) -> dict[str, str]:
    """JSON, and the bearer key when there is one (local servers often need none)."""
    out = {"Content-Type": "application/json"}
    if key:
        out["Authorization"] = f"Bearer {key}"
    return out


def redact(text: str, key: str | None) -> str:
    """`text` with the key replaced, so no message or log line carries it."""
    return text.replace(key, "***") if key else text


def excerpt(body: str, key: str | None) -> str:
    """An error answer's body as one short line for a message (the key redacted)."""
    return redact(" ".join(body.split())[:EXCERPT_CHARS], key) or NO_BODY


def message_content(answer: Any) -> Any:
    """`choices[0].message.content` of a chat completion answer (any JSON value); ValueError
    when the answer has no such thing."""
    try:
        return answer["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise ValueError("no choices[0].message.content") from None


def unfenced(text: str) -> str:
    """Models often wrap their reply in a ``` fence although told not to: the text inside
    one outer fence (its info string, like `json`, dropped; the closing ``` on a line of its
    own or at the end of the last line), ending in a newline. Text not fenced whole is
    returned unchanged."""
    lines = text.strip().split("\n")
    if len(lines) < 2 or not lines[0].startswith(FENCE):
        return text
    last = lines[-1].rstrip()
    if last.strip() == FENCE:
        inner = lines[1:-1]
    elif last.endswith(FENCE):
        inner = [*lines[1:-1], last[: -len(FENCE)]]
    else:
        return text
    return "\n".join(inner) + "\n"


# ---------------------------------------------------------------------------------- shell
@dataclass(frozen=True)
class Wording:
    """What a failed call says: `shape` (used as it is) is the caller's, for an answer it cannot
    read; the endpoint's own failures are said alike for every caller: `timeout` gets {url} and
    {seconds}, `unreachable` {url} and {problem}, `status` {url}, {status} and {answer}."""

    shape: str
    timeout: str = "the LLM endpoint {url} did not answer within {seconds:g}s"
    unreachable: str = "the LLM endpoint {url} cannot be reached ({problem})"
    status: str = "the LLM endpoint {url} answered HTTP {status}: {answer}"


class ChatClient:
    """POSTs chat completion requests to one endpoint; every failure raises `error` with one
    line of `wording`, never the key."""

    def __init__(self, url: str, key: str | None = None, *, timeout: float, wording: Wording,
                 error: type[Exception], session: requests.Session | None = None) -> None:
        self.url = endpoint(url)
        self.timeout = timeout
        self.wording = wording
        self.error = error
        self.session = session or requests.Session()
        self._key = key

    def __repr__(self) -> str:
        return f"ChatClient(url={self.url!r})"

    def complete(self, body: Mapping[str, Any]) -> Any:
        """The first choice's content (any JSON value) of the answer to `body`."""
        try:
            resp = self.session.post(self.url, json=body, headers=headers(self._key), timeout=self.timeout)
        except requests.exceptions.Timeout:
            raise self.error(self.wording.timeout.format(url=self.url, seconds=self.timeout)) from None
        except requests.exceptions.RequestException as exc:
            raise self.error(self.wording.unreachable.format(
                url=self.url, problem=redact(type(exc).__name__, self._key))) from None
        if resp.status_code != 200:
            raise self.error(self.wording.status.format(url=self.url, status=resp.status_code,
                                                        answer=excerpt(resp.text, self._key)))
        try:
            return message_content(resp.json())
        except ValueError:  # no JSON at all, or JSON of the wrong shape
            raise self.error(self.wording.shape) from None
