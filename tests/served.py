"""`memrepo serve --local` run as a child process, for the tests and benchmarks that need
the whole stack: starts it on free ports, reads the URLs and the operator token it prints, and
stops it (SIGINT; the whole process group if it does not stop in time)."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from bot.settings import SERVICE_ENV  # production settings that must not leak into the local stack

START_TIMEOUT = 60.0
_SETTING = re.compile(r"^\s+([a-zA-Z ()]+):\s+(\S+)")


class LocalStack:
    """`memrepo serve --local --port PORT --data DIR` (PORT 0: free ports; None: no --port, the
    ports DIR recorded); its output is read on a thread into `output`."""

    def __init__(self, data: Path, start_timeout: float = START_TIMEOUT, port: int | None = 0) -> None:
        env = {k: v for k, v in os.environ.items() if k not in SERVICE_ENV}
        self.data = data
        ports = [] if port is None else ["--port", str(port)]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "serve", "--local", *ports, "--data", str(data)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.output: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.urls: dict[str, str] = {}
        deadline = time.monotonic() + start_timeout
        while "operator token" not in self.urls:
            try:
                line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                self.stop()
                raise RuntimeError("serve --local did not start in time:\n" + "".join(self.output)) from None
            if line is None:
                raise RuntimeError("serve --local exited at start:\n" + "".join(self.output))
            match = _SETTING.match(line)
            if match:
                self.urls[match.group(1).strip()] = match.group(2)

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line)
            self.lines.put(line)
        self.lines.put(None)

    @property
    def api(self) -> str:
        return self.urls["localhub REST"]

    @property
    def web(self) -> str:
        return self.api.removesuffix("/api/v3")

    @property
    def receiver(self) -> str:
        return self.urls["receiver"].removesuffix("/webhooks/github")

    @property
    def agent_token(self) -> str:
        return self.urls["operator token"]

    @property
    def worker_log(self) -> Path:
        return self.data / "logs" / "worker.log"

    def new_token(self, login: str) -> str:
        """A new localhub token for `login` (its account made on first use), asked for with the
        operator credential in the stack's localhub data folder, as every `/_localhub/` call is."""
        import requests

        from localhub.operator import read_operator_token

        secret = read_operator_token(self.data / "localhub")
        resp = requests.post(f"{self.web}/_localhub/tokens", json={"login": login},
                             headers={"Authorization": f"Bearer {secret}"}, timeout=10)
        resp.raise_for_status()
        return str(resp.json()["token"])

    def stop(self, timeout: float = 40.0) -> int:
        """SIGINT and wait; after `timeout`, SIGKILL the whole process group (the exit code is
        then negative, so a caller expecting a clean stop sees it failed)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.kill()
            return self.process.wait()
