"""A scripted Anthropic-compatible Messages endpoint on loopback, for the real Claude Code CLI.

It (a tests/scripted_endpoint.py) answers each POST /v1/messages with the next scripted reply:
a text, or a tool call given as {"name": TOOL, "input": {...}}, streamed as Server-Sent Events
the way the Messages API streams when the request asks for it, or as one JSON message.
"""

from __future__ import annotations

import json
from typing import Any

from tests.scripted_endpoint import ScriptedEndpoint


class Endpoint(ScriptedEndpoint):
    MODEL_PATH = "/v1/messages"
    NOT_FOUND = b'{"type":"error","error":{"type":"not_found_error","message":"not here"}}'

    def messages(self) -> list[dict[str, Any]]:
        """The bodies of the POST /v1/messages requests, in order."""
        return self.posts()

    def answer_post(self, path: str, body: dict[str, Any]) -> tuple[int, bytes, str] | None:
        if path == "/v1/messages/count_tokens":
            return 200, b'{"input_tokens": 100}', "application/json"
        if path != self.MODEL_PATH:
            return None
        reply, _ = self.next_reply()
        if isinstance(reply, dict):
            block = {"type": "tool_use", "id": f"toolu_{len(self.requests)}", "name": reply["name"],
                     "input": reply["input"]}
            start, delta = {**block, "input": {}}, {"type": "input_json_delta",
                                                     "partial_json": json.dumps(reply["input"])}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": reply}
            start, delta, stop = {"type": "text", "text": ""}, {"type": "text_delta", "text": reply}, "end_turn"
        model = body.get("model", "claude")
        message = {"id": "msg_scripted", "type": "message", "role": "assistant", "model": model,
                   "content": [], "stop_reason": None, "stop_sequence": None,
                   "usage": {"input_tokens": 10, "output_tokens": 1}}
        if not body.get("stream"):
            message.update(content=[block], stop_reason=stop)
            return 200, json.dumps(message).encode(), "application/json"
        events = [
            ("message_start", {"type": "message_start", "message": message}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        payload = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()
        return 200, payload, "text/event-stream"
