"""A scripted model endpoint on loopback, the part Claude Code's Messages endpoint
(tests/claude_code_conformance/endpoint.py) and Codex's Responses endpoint
(tests/codex_conformance/endpoint.py) share: a threaded HTTP server that records every request
(method, path, JSON body) and answers each POST to its model path with the next scripted reply
(the last one again when the script runs out). A subclass says how a reply is sent."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = str | dict[str, Any]


class ScriptedEndpoint:
    """Subclasses set MODEL_PATH, URL_SUFFIX and NOT_FOUND and write `answer_post` (and
    `answer_get` when a GET has an answer)."""

    MODEL_PATH = ""
    URL_SUFFIX = ""
    NOT_FOUND = b""

    def __init__(self, replies: list[Reply] | None = None) -> None:
        self.replies: list[Reply] = list(replies or ["Noted."])
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.URL_SUFFIX}"

    def __enter__(self) -> ScriptedEndpoint:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def posts(self) -> list[dict[str, Any]]:
        """The bodies of the POSTs to the model path, in order."""
        with self._lock:
            return [r["body"] for r in self.requests if r["method"] == "POST" and r["path"] == self.MODEL_PATH]

    def next_reply(self) -> tuple[Reply, int]:
        """The scripted reply for the POST just recorded, and its number (1 for the first)."""
        count = len(self.posts())
        return self.replies[min(count - 1, len(self.replies) - 1)], count

    def answer_get(self, path: str) -> tuple[int, bytes, str] | None:
        """(status, payload, content type) for a GET, or None for a 404."""
        return None

    def answer_post(self, path: str, body: dict[str, Any]) -> tuple[int, bytes, str] | None:
        """(status, payload, content type) for a POST, or None for a 404."""
        raise NotImplementedError

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _record(self, body: Any) -> str:
                path = self.path.split("?")[0]
                with endpoint._lock:
                    endpoint.requests.append({"method": self.command, "path": path, "body": body})
                return path

            def _send(self, answer: tuple[int, bytes, str] | None) -> None:
                status, payload, kind = answer or (404, endpoint.NOT_FOUND, "application/json")
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                self._send(endpoint.answer_get(self._record(None)))

            do_HEAD = do_GET

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"raw": raw.decode("utf-8", "replace")}
                self._send(endpoint.answer_post(self._record(body), body))

        return Handler
