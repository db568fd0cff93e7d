"""Codex's hooks: the compiled core memory in the model's context, and each turn imported.

`session-start` (SessionStart) always adds the core memory as `memrepo compile` prints it;
`prompt` (UserPromptSubmit) adds it again only when the clone's HEAD moved since this session
last saw it (a merged dream, `follow`, a shared memory), once per HEAD. Both are Claude Code's
hook logic (bot/claude_code/hook.py: core_memory), with the state kept apart under
`.git/memrepo/codex/<session>.json`: Codex reads the same `hookSpecificOutput.additionalContext`.
They also keep the session's rollout path (`transcript_path`), which the MCP server reads to
name the turn of a write: Codex starts MCP servers with a minimal environment and tells them
the session only in each call's `_meta`.

`stop` (Stop) imports what the rollout gained and hands the dream triggers on in a detached
process (`triggers`), as Claude Code's Stop hook does (bot/codex/turn_end.py).

A rollout is read only from Codex's sessions folder (`--sessions`, which install sets to the
CODEX_HOME it wrote into) or a folder named in MEMREPO_CODEX_TRANSCRIPTS. A prompt where
nothing moved reads two ref files and one small file: no git process, no compile.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from bot.claude_code import hook as shared
from bot.codex.state import HOOK_MODULE, STATE_DIR, transcript_problem

HOOK_BAD_INPUT = "memrepo codex hook: the hook input on standard input is not a JSON object ({problem})"

SESSION_START, PROMPT, STOP = shared.SESSION_START, shared.PROMPT, shared.STOP
EVENTS = {SESSION_START: "SessionStart", PROMPT: "UserPromptSubmit", STOP: "Stop"}
TRIGGERS = shared.TRIGGERS
COMMANDS = (*EVENTS, TRIGGERS)
RESUME = "resume"  # SessionStart's `source` when `codex resume` / `codex exec resume` continues a session


def answer(event: str, root: Path, hook_input: dict, sessions: Path) -> str | None:
    """The hook's JSON output for one call, or None when there is nothing to add. A resumed
    session keeps the context it was given (Codex replays the rollout's history), so at a
    resume the memory is added only if HEAD moved, as at a prompt."""
    resumed = event == SESSION_START and hook_input.get("source") == RESUME
    return shared.core_memory(event, root, hook_input, folder=STATE_DIR, label="codex",
                              problem_of=lambda path: transcript_problem(path, sessions, os.environ),
                              only_if_moved=True if resumed else None)


def run(event: str, repo: str, sessions: str) -> int:
    """One hook call: input from standard input, output to standard output."""

    hook_input = shared.read_input(sys.stdin, HOOK_BAD_INPUT)
    root, folder = Path(repo).expanduser().absolute(), Path(sessions).expanduser().absolute()
    try:
        if event == STOP:
            from bot.codex import turn_end

            turn_end.after_turn(root, hook_input, folder)
            result = None
        elif event == TRIGGERS:
            from bot.claude_code import turn_end as shared_turn_end

            result = "\n".join(shared_turn_end.fire(root, hook_input)) or None
        else:
            result = answer(event, root, hook_input, folder)
    except Exception as exc:  # a hook never stops the user's prompt: say it, exit 1
        print(f"memrepo codex hook: {exc}", file=sys.stderr)
        return 1
    if result is not None:
        sys.stdout.write(result + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    """`python -m bot.codex.hook EVENT --repo DIR --sessions DIR`: the command install
    registers, which reaches the hook without argparse (the path every prompt pays for)."""
    argv = sys.argv[1:] if argv is None else argv
    hook = len(argv) == 5 and argv[0] in EVENTS and argv[3] == "--sessions"
    triggers = len(argv) == 3 and argv[0] == TRIGGERS  # the detached process the Stop hook starts
    if not (hook or triggers) or argv[1] != "--repo":
        print(f"usage: python -m {HOOK_MODULE} {{{','.join(EVENTS)}}} --repo DIR --sessions DIR", file=sys.stderr)
        return 2
    return run(argv[0], argv[2], argv[4] if hook else "")


if __name__ == "__main__":
    sys.exit(main())
