"""A scripted OpenAI Responses-API endpoint on loopback, for the real Codex CLI.

Codex (codex-rs/codex-api/src/sse/responses.rs) reads the stream of POST /v1/responses as
Server-Sent Events and acts on `response.created`, `response.output_item.done` (each whole
output item: a `message` with `output_text` content, or a `function_call` with `call_id`,
`name`, JSON-encoded `arguments` and, for a tool of a namespace such as an MCP server's, its
`namespace`) and `response.completed` (its `response.id`); a stream that ends without
`response.completed` is an error it retries. This endpoint (a tests/scripted_endpoint.py)
answers each POST /v1/responses with the next scripted reply: a text, or a tool call given as
{"name": TOOL, "namespace": NAMESPACE, "arguments": {...}}.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from tests.scripted_endpoint import ScriptedEndpoint


def events_for(reply: str | dict[str, Any], number: int) -> list[dict[str, Any]]:
    """The Responses stream's events for one scripted reply (the `number`th response)."""
    unique = uuid.uuid4().hex  # item ids are unique across sessions, as OpenAI's are
    response_id = f"resp_{unique}"
    if isinstance(reply, dict):
        item: dict[str, Any] = {"type": "function_call", "id": f"fc_{unique}", "call_id": f"call_{unique}",
                                "name": reply["name"], "arguments": json.dumps(reply.get("arguments", {}))}
        if reply.get("namespace"):
            item["namespace"] = reply["namespace"]
    else:
        item = {"type": "message", "id": f"msg_{unique}", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": reply, "annotations": []}]}
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
    return [
        {"type": "response.created", "response": {"id": response_id, "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": {"id": response_id, "status": "completed", "usage": usage}},
    ]


class Endpoint(ScriptedEndpoint):
    MODEL_PATH = "/v1/responses"
    URL_SUFFIX = "/v1"
    NOT_FOUND = b'{"error":{"type":"not_found","message":"not here"}}'

    def responses(self) -> list[dict[str, Any]]:
        """The bodies of the POST /v1/responses requests, in order."""
        return self.posts()

    def answer_get(self, path: str) -> tuple[int, bytes, str] | None:
        return (200, b'{"object":"list","data":[]}', "application/json") if path == "/v1/models" else None

    def answer_post(self, path: str, body: dict[str, Any]) -> tuple[int, bytes, str] | None:
        if path != self.MODEL_PATH:
            return None
        reply, number = self.next_reply()
        payload = "".join(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                          for event in events_for(reply, number)).encode()
        return 200, payload, "text/event-stream"
