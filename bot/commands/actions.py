"""A command's actions (`memrepo shared attach`, `memrepo review approve`, ...): each a parser of
its own that takes `--repo` and names the function it runs, built one way for every command so
their help and defaults cannot drift apart."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

Run = Callable[[argparse.Namespace], int]


def actions(parser: argparse.ArgumentParser, *, repo_help: str, repo_metavar: str = "DIR",
            **options: Any) -> Callable[[str, str, Run], argparse.ArgumentParser]:
    """A function that adds one action to `parser`: its name, its help (also its description)
    and what it runs; `options` go to every action's parser (an epilog, a formatter)."""
    sub = parser.add_subparsers(title="actions", metavar="ACTION", required=True)

    def action(name: str, help_text: str, func: Run) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text, **options)
        p.add_argument("--repo", metavar=repo_metavar, default=".", help=repo_help)
        p.set_defaults(func=func)
        return p

    return action
