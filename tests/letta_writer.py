"""Letta Code's transcripts, written by Letta Code's own writer for memrepo's tests.

`write(root, turns)` runs Letta's appendTranscriptDeltaJsonl, from the pinned package
(tests/letta_conformance/letta.py fetches it), under node (`letta_transcripts.cjs`): each turn
is one call, as Letta Code makes at the end of a turn, with LETTA_TRANSCRIPT_ROOT=root and the
clock at the turn's time. The line builders below give a turn's lines the shape Letta's
accumulator gives them (src/cli/helpers/accumulator.ts): a user line's id is `user-<otid>`, a
reasoning line's is its message id, and the assistant line of the same message, whose id is
already taken, is `assistant:<message id>`; a tool call's line is its call id, with its result.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.letta_conformance.letta import package_dir

SCRIPT = Path(__file__).resolve().parent / "letta_transcripts.cjs"
AGENT = "agent-6f1c2a3e-0d4b-4c8e-9a7f-2b5d8e1c4f60"
CONVERSATION = "conv-1d2e3f40-5a6b-4c7d-8e9f-0a1b2c3d4e5f"

Line = dict[str, Any]


@dataclass(frozen=True)
class Turn:
    """One turn's lines, appended by Letta at `at` to the agent's conversation."""

    lines: list[Line]
    at: str = "2026-03-14T09:00:00.000Z"
    agent: str = AGENT
    conversation: str = CONVERSATION


def write(root: Path, turns: list[Turn]) -> Path:
    """Append `turns` under `root` with Letta's writer; the last turn's conversation folder."""
    payload = json.dumps({"root": str(root), "turns": [asdict(turn) for turn in turns]})
    done = subprocess.run(["node", str(SCRIPT), str(package_dir())], input=payload, capture_output=True,
                          text=True, timeout=60)
    if done.returncode != 0:
        pytest.fail(f"Letta's transcript writer failed: {done.stderr.strip()}")
    return root / turns[-1].agent / turns[-1].conversation


def user(text: str, otid: str, message_id: str | None = None) -> Line:
    line: Line = {"kind": "user", "id": f"user-{otid}", "text": text, "otid": otid}
    return {**line, "messageId": message_id} if message_id else line


def reasoning(text: str, message_id: str) -> Line:
    return {"kind": "reasoning", "id": message_id, "text": text, "phase": "finished", "messageId": message_id}


def assistant(text: str, message_id: str, *, after_reasoning: bool = True) -> Line:
    line_id = f"assistant:{message_id}" if after_reasoning else message_id
    return {"kind": "assistant", "id": line_id, "text": text, "phase": "finished", "messageId": message_id}


def tool(call_id: str, name: str, args: str, result: str | None, ok: bool = True) -> Line:
    line: Line = {"kind": "tool_call", "id": call_id, "toolCallId": call_id, "name": name, "argsText": args,
                  "phase": "finished"}
    return line if result is None else {**line, "resultText": result, "resultOk": ok}


def error(text: str, line_id: str) -> Line:
    return {"kind": "error", "id": line_id, "text": text}
