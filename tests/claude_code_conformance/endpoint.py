"""A scripted Anthropic-compatible Messages endpoint on loopback, for the real Claude Code CLI.

It records every request (method, path, JSON body) and answers each POST /v1/messages with the
next scripted reply (the last one again when the script runs out): a text, or a tool call given as
{"name": TOOL, "input": {...}}, streamed as Server-Sent
Events the way the Messages API streams when the request asks for it, or as one JSON message.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Endpoint:
    def __init__(self, replies: list[str | dict[str, Any]] | None = None) -> None:
        self.replies: list[str | dict[str, Any]] = list(replies or ["Noted."])
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Endpoint:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def messages(self) -> list[dict[str, Any]]:
        """The bodies of the POST /v1/messages requests, in order."""
        with self._lock:
            return [r["body"] for r in self.requests if r["method"] == "POST" and r["path"] == "/v1/messages"]

    def _next_reply(self) -> str | dict[str, Any]:
        with self._lock:
            count = sum(1 for r in self.requests if r["path"] == "/v1/messages")
        return self.replies[min(count - 1, len(self.replies) - 1)]

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
                self._send(404, b'{"type":"error","error":{"type":"not_found_error","message":"not here"}}')

            do_HEAD = do_GET

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"raw": raw.decode("utf-8", "replace")}
                self._record(body)
                path = self.path.split("?")[0]
                if path == "/v1/messages/count_tokens":
                    self._send(200, b'{"input_tokens": 100}')
                    return
                if path != "/v1/messages":
                    self._send(404, b'{"type":"error","error":{"type":"not_found_error","message":"not here"}}')
                    return
                reply = endpoint._next_reply()
                if isinstance(reply, dict):
                    block = {"type": "tool_use", "id": f"toolu_{len(endpoint.requests)}", "name": reply["name"],
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
                    self._send(200, json.dumps(message).encode())
                    return
                events = [
                    ("message_start", {"type": "message_start", "message": message}),
                    ("content_block_start", {"type": "content_block_start", "index": 0,
                                             "content_block": start}),
                    ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                             "delta": delta}),
                    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop,
                                                                          "stop_sequence": None},
                                       "usage": {"output_tokens": 5}}),
                    ("message_stop", {"type": "message_stop"}),
                ]
                payload = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()
                self._send(200, payload, "text/event-stream")

        return Handler
