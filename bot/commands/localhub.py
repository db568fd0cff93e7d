"""`memrepo localhub serve`: GitHub's REST API and git transport on this machine."""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import os
from pathlib import Path

from bot import messages
from bot.errors import MemrepoError


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "memrepo" / "localhub"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("localhub", help=messages.LOCALHUB_HELP,
                       description="localhub speaks the part of GitHub's REST API and git transport "
                       "memrepo uses, so PyGithub and git work against it unchanged.")
    actions = p.add_subparsers(title="actions", metavar="ACTION", required=True)
    serve = actions.add_parser("serve", help="serve REST at http://HOST:PORT/api/v3 and git at /<owner>/<repo>.git")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback only)")
    serve.add_argument("--port", type=int, default=8765, help="port (0: any free port)")
    serve.add_argument("--data", type=Path, default=None, metavar="DIR",
                       help=f"where repositories and state live (default: {default_data_dir()})")
    serve.add_argument("--access-log", action="store_true", help="print one line per request")
    serve.set_defaults(func=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    from bot.forge.localhub.server import LocalhubServer

    data = (args.data or default_data_dir()).expanduser()
    if not 0 <= args.port <= 65535:
        raise MemrepoError(messages.LOCALHUB_BAD_PORT.format(port=args.port))
    try:
        data.mkdir(parents=True, exist_ok=True)
        with contextlib.redirect_stderr(io.StringIO()):  # werkzeug prints its own advice, then exits
            server = LocalhubServer(data, args.host, args.port)
    except OSError as exc:
        raise MemrepoError(messages.LOCALHUB_CANNOT_START.format(
            host=args.host, port=args.port, data=data, error=exc.strerror or exc)) from None
    except SystemExit:
        raise MemrepoError(messages.LOCALHUB_CANNOT_START.format(
            host=args.host, port=args.port, data=data, error="the address is in use")) from None
    if args.access_log:
        logging.basicConfig(level=logging.INFO, format="%(message)s")
        logging.getLogger("localhub.access").setLevel(logging.INFO)
    print(messages.LOCALHUB_SERVING.format(url=server.url, api=server.api_url, data=data), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0
