"""Where a Codex session's hooks keep what they saw (`.git/memrepo/codex/<session>.json`, read
and written by bot/claude_code/state.py), which rollouts a hook may read, and how the hook is
started again. The hook, the end of a turn and the MCP server's transcript reader share these;
the quiet prompt's path imports nothing more than the standard library and the ref reader.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from bot.claude_code import state as shared

TRANSCRIPT_ELSEWHERE = ("did not import {path}: it is not in Codex's sessions folder {folder}; to import it "
                        "anyway, name its folder in {env}")

HOOK_MODULE = "bot.codex.hook"
STATE_DIR = ("memrepo", "codex")
NAMED_ENV = "MEMREPO_CODEX_TRANSCRIPTS"  # folders (os.pathsep between) whose rollouts a user allows


def state_file(root: Path, session: str) -> Path | None:
    return shared.state_file(root, session, STATE_DIR)


def transcript_problem(transcript: str, sessions: Path, env: Mapping[str, str]) -> str | None:
    """Why a hook may not import `transcript`, or None: it must be a rollout (`.jsonl`) inside
    Codex's sessions folder or a folder named in MEMREPO_CODEX_TRANSCRIPTS, compared after links
    and `..` are resolved."""

    path = Path(transcript).expanduser()
    if not path.is_absolute() or path.suffix != ".jsonl":
        return f"did not import {transcript}: a Codex rollout is an absolute path ending in .jsonl"
    named = [Path(folder).expanduser() for folder in env.get(NAMED_ENV, "").split(os.pathsep) if folder.strip()]
    if any(path.resolve().is_relative_to(folder.resolve()) for folder in [sessions, *named]):
        return None
    return TRANSCRIPT_ELSEWHERE.format(path=transcript, folder=sessions, env=NAMED_ENV)
