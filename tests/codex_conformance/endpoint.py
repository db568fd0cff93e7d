"""A scripted OpenAI Responses-API endpoint on loopback, for the real Codex CLI.

Codex (codex-rs/codex-api/src/sse/responses.rs) reads the stream of POST /v1/responses as
Server-Sent Events and acts on `response.created`, `response.output_item.done` (each whole
output item: a `message` with `output_text` content, or a `function_call` with `call_id`,
`name`, JSON-encoded `arguments` and, for a tool of a namespace such as an MCP server's, its
`namespace`) and `response.completed` (its `response.id`); a stream that ends without
`response.completed` is an error it retries. This endpoint records every request (method,
path, JSON body) and answers each POST /v1/responses with the next scripted reply (the last one
again when the script runs out): a text, or a tool call given as
{"name": TOOL, "namespace": NAMESPACE, "arguments": {...}}.
"""

from __future__ import annotations

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


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


class Endpoint:
    def __init__(self, replies: list[str | dict[str, Any]] | None = None) -> None:
        self.replies: list[str | dict[str, Any]] = list(replies or ["Noted."])
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> Endpoint:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def responses(self) -> list[dict[str, Any]]:
        """The bodies of the POST /v1/responses requests, in order."""
        with self._lock:
            return [r["body"] for r in self.requests if r["method"] == "POST" and r["path"] == "/v1/responses"]

    def _next(self) -> tuple[str | dict[str, Any], int]:
        with self._lock:
            count = sum(1 for r in self.requests if r["method"] == "POST" and r["path"] == "/v1/responses")
        return self.replies[min(count - 1, len(self.replies) - 1)], count

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _record(self, body: Any) -> None:
                with endpoint._lock:
                    endpoint.requests.append({"method": self.command, "path": self.path.split("?")[0], "body": body})

            def _send(self, status: int, payload: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                self._record(None)
                if self.path.split("?")[0] == "/v1/models":
                    self._send(200, b'{"object":"list","data":[]}')
                    return
                self._send(404, b'{"error":{"type":"not_found","message":"not here"}}')

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"raw": raw.decode("utf-8", "replace")}
                self._record(body)
                if self.path.split("?")[0] != "/v1/responses":
                    self._send(404, b'{"error":{"type":"not_found","message":"not here"}}')
                    return
                reply, number = endpoint._next()
                payload = "".join(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                                  for event in events_for(reply, number)).encode()
                self._send(200, payload, "text/event-stream")

        return Handler
