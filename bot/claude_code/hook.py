"""Claude Code's hooks: the compiled core memory in the model's context.

`stop` (Stop) and `session-end` (SessionEnd) bring the session's transcript into the store and
hand its dream triggers on (bot/claude_code/turn_end.py); `triggers` is the detached process
that hands them to dreams. `post-tool` (PostToolUse, with `install --auto-memory`) commits
Claude Code's auto memory writes (bot/claude_code/auto_memory.py).

`session-start` (SessionStart: startup, resume, clear, compact) always adds the core memory as
`memrepo compile` prints it. `prompt` (UserPromptSubmit) adds it again only when the clone's
HEAD, or the HEAD of a shared memory's projection the prompt showed, moved since this session
last saw it, so that a change merged while the session runs (in its memory or in a shared
memory attached to it) reaches it at its next prompt. What a session saw is kept per session
under the memory's git folder (`.git/memrepo/claude-code/<session>.json`).

A prompt where nothing moved is one read of the ref files (the clone's and each projection's)
and of that small file: no git process, no compile, and nothing imported beyond the standard
library, bot.claude_code.state and bot.memfs.store.refs (the compiler is imported only when it
runs). The hook imports those leaves of the memory core, not its door (tests/house/test_layers.py names
the exception). Claude Code reads the hook's JSON on standard output; a problem is said on
standard error with exit 1, which Claude Code shows without stopping the prompt.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from bot.claude_code.state import HOOK_MODULE, STATE_DIR, TRIGGERS, remember, seen, seen_fact, state_file
from bot.memfs.store import refs  # a leaf, not the door: the quiet prompt reads two ref files and nothing more

HOOK_BAD_INPUT = "memrepo claude-code hook: the hook input on standard input is not a JSON object ({problem})"
HOOK_INPUT_TOO_LONG = "it is longer than {limit} characters"

SESSION_START, PROMPT, STOP, SESSION_END = "session-start", "prompt", "stop", "session-end"
POST_TOOL = "post-tool"
EVENTS = {SESSION_START: "SessionStart", PROMPT: "UserPromptSubmit", STOP: "Stop", SESSION_END: "SessionEnd",
          POST_TOOL: "PostToolUse"}
COMMANDS = (*EVENTS, TRIGGERS)
MAX_INPUT = 64 * 1024 * 1024  # characters of hook input: a pasted prompt or a written file, with room to spare
FEW_BRACKETS = 64  # bot.bounded_json.MAX_DEPTH: no more opening brackets than that cannot nest deeper


def compiled(root: Path) -> tuple[str, str, dict[str, str]]:
    """(the core memory as `memrepo compile` prints it, the HEAD it was compiled at, each
    attached shared memory's projection -> the commit shown), read through the git command: a
    hook process compiles once, and importing pygit2 would cost it more than the compile."""
    from bot.memfs.prompt.compiler import PromptCompiler
    from bot.memfs.store.git_command import CommandSnapshot

    compiler = PromptCompiler(root, repo=CommandSnapshot(root))
    result = compiler.compile("")
    return result.text, result.head_sha, compiler.projection_heads()


def unmoved(root: Path, where: Path | None) -> bool:
    """Whether the clone's HEAD and every projection's HEAD are as this session last saw them."""
    head = refs.resolve(root)
    if head is None or head != seen(where):
        return False
    try:
        projections = json.loads(seen_fact(where, "shared") or "{}")
    except ValueError:
        return False
    return isinstance(projections, dict) and all(
        (refs.resolve(Path(path)) or "") == sha for path, sha in projections.items())


def output(event: str, context: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": EVENTS[event], "additionalContext": context}})


def answer(event: str, root: Path, hook_input: dict) -> str | None:
    """The hook's JSON output for one call, or None when there is nothing to add."""
    return core_memory(event, root, hook_input, folder=STATE_DIR, problem_of=lambda path: _problem(path, hook_input),
                       label="claude-code")


def _problem(transcript: str, hook_input: dict) -> str | None:
    from bot.claude_code.transcript import transcript_problem  # only when there is a new path to check

    return transcript_problem(transcript, hook_input.get("cwd"), os.environ)


def core_memory(event: str, root: Path, hook_input: dict, *, folder: tuple[str, ...],
                problem_of: Callable[[str], str | None], label: str, only_if_moved: bool | None = None) -> str | None:
    """The core memory for a harness's session-start or prompt hook (Claude Code's, Codex's:
    both read this output): always at session start, at a prompt (or whenever `only_if_moved`)
    only when the clone's HEAD moved since the session last saw it. The transcript path the
    hook was told is kept when `problem_of` finds nothing wrong with it (else said on
    standard error)."""
    session = str(hook_input.get("session_id") or "")
    where = state_file(root, session, folder) if session else None
    only_if_moved = event == PROMPT if only_if_moved is None else only_if_moved
    if only_if_moved and unmoved(root, where):
        return None
    text, head, projections = compiled(root)
    facts = {"head": head, "shared": json.dumps(projections, sort_keys=True)}
    transcript = hook_input.get("transcript_path")
    if isinstance(transcript, str) and transcript and transcript != seen_fact(where, "transcript"):
        problem = problem_of(transcript)
        if problem is None:
            facts["transcript"] = transcript
        else:  # the memory is still shown; the session's writes name the session only

            print(f"memrepo {label} hook: {problem}", file=sys.stderr)
    remember(where, **facts)
    if only_if_moved:

        text = f"The memory changed since it was last shown; this is the memory now:\n\n{text}"
    return output(event, text)


def parse_input(raw: str) -> object:
    """The hook input's value. Text with few brackets cannot nest deeply and is parsed at once
    (the quiet prompt's path imports nothing more); other text goes through bot.bounded_json,
    so 100,000 nested brackets are a refusal (a ValueError), not a RecursionError."""
    if raw.count("[") + raw.count("{") <= FEW_BRACKETS:
        return json.loads(raw)
    from bot.bounded_json import loads_bounded

    return loads_bounded(raw, what="the hook input")


def read_input(stream, refusal: str | None = None) -> dict:
    """The hook input, read to at most MAX_INPUT characters: more, or anything but a JSON
    object, is a one-line refusal (exit 1, nothing done); `refusal` is its text, with
    {problem} (default: Claude Code's hook's)."""
    raw = stream.read(MAX_INPUT + 1)
    if len(raw) > MAX_INPUT:

        refusal = refusal or HOOK_BAD_INPUT
        raise SystemExit(refusal.format(problem=HOOK_INPUT_TOO_LONG.format(limit=MAX_INPUT)))
    try:
        value = parse_input(raw) if raw.strip() else {}
    except ValueError as exc:
        value, problem = None, str(exc)
    else:
        problem = type(value).__name__
    if not isinstance(value, dict):

        raise SystemExit((refusal or HOOK_BAD_INPUT).format(problem=problem))
    return value


def run(event: str, repo: str) -> int:
    """One hook call: input from standard input, output to standard output."""
    hook_input = read_input(sys.stdin)
    root = Path(repo).expanduser().absolute()
    try:
        if event in (STOP, SESSION_END):
            from bot.claude_code import turn_end

            turn_end.after_turn(root, hook_input)
            result = None
        elif event == POST_TOOL:
            from bot.claude_code import auto_memory

            result = auto_memory.after_write(root, hook_input)
        elif event == TRIGGERS:
            from bot.claude_code import turn_end

            result = "\n".join(turn_end.fire(root, hook_input)) or None
        else:
            result = answer(event, root, hook_input)
    except Exception as exc:  # a hook never stops the user's prompt: say it, exit 1 (not 2)
        print(f"memrepo claude-code hook: {exc}", file=sys.stderr)
        return 1
    if result is not None:
        sys.stdout.write(result + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    """`python -m bot.claude_code.hook EVENT --repo DIR`: the command install registers, which
    reaches the hook without argparse or the command line's texts (the path every prompt pays for)."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 3 or argv[0] not in COMMANDS or argv[1] != "--repo":
        print(f"usage: python -m {HOOK_MODULE} {{{','.join(COMMANDS)}}} --repo DIR", file=sys.stderr)
        return 2
    return run(argv[0], argv[2])


if __name__ == "__main__":
    sys.exit(main())
