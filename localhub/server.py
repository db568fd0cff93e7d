"""Run localhub: in the foreground for `memrepo localhub serve`, or on a background thread
for tests and the demo (a real HTTP server on a real port either way)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

from localhub.app import create_app
from localhub.hub import Hub


class _QuietHandler(WSGIRequestHandler):
    """No access log line per request (tests and the demo make thousands)."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        if logging.getLogger("localhub.access").isEnabledFor(logging.INFO):
            super().log_request(code, size)


class LocalhubServer:
    """localhub on `host:port` (port 0: any free port). `url` is the web root; the REST API
    is at `api_url` (PyGithub's `base_url`)."""

    def __init__(self, data_dir: str | Path, host: str = "127.0.0.1", port: int = 0) -> None:
        self.hub = Hub(Path(data_dir))
        self.app = create_app(data_dir, hub=self.hub)
        self._server: BaseWSGIServer = make_server(host, port, self.app, threaded=True,
                                                   request_handler=_QuietHandler)
        self.host = host
        self.port = self._server.server_port
        self.hub.public_url = self.url
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def api_url(self) -> str:
        return f"{self.url}/api/v3"

    def start(self) -> LocalhubServer:
        self._thread = threading.Thread(target=self._server.serve_forever, name="localhub", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.hub.close()

    def __enter__(self) -> LocalhubServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
