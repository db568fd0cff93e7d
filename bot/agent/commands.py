"""Slash commands as a harness's user types them, parsed into plain data (pure).

    /memory-repository set <url> | status | unset | sync   (bare: status)
    /dream                                                  a dream now
    /sleeptime [off | steps <N> | compaction]               when dreams run (bare: show)
    /recompile                                              the system prompt, now
    /remember <text>                                        a memory note, committed directly
    /doctor                                                 sizes, descriptions, pending pushes

Command names are case-insensitive; arguments are kept as typed (a note keeps its newlines).
Anything else is refused with a message listing the known commands.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.errors import MemrepoError

# Slash commands (commands.py, sleeptime.py).
AGENT_NOT_A_COMMAND = "not a command (commands start with /); known commands: {commands}"
AGENT_COMMAND_USAGES = {
    "memory-repository": "set <url> | status | unset | sync",
    "dream": "(no arguments: a dream now)",
    "sleeptime": "off | steps <N> | compaction (no argument: show when dreams run)",
    "recompile": "(no arguments)",
    "remember": "<what to remember>",
    "doctor": "(no arguments)",
}

COMMANDS = ("memory-repository", "dream", "sleeptime", "recompile", "remember", "doctor")
REPOSITORY_ACTIONS = ("set", "status", "unset", "sync")
SLEEPTIME_MODES = ("off", "steps", "compaction")


@dataclass(frozen=True)
class Command:
    """`name` is one of COMMANDS; `action` a sub-command (or None); `value` its argument."""

    name: str
    action: str | None = None
    value: str | int | None = None


def known_commands() -> str:
    return ", ".join(f"/{name}" for name in COMMANDS)


def _usage(name: str) -> MemrepoError:
    return MemrepoError(f"usage: /{name} {AGENT_COMMAND_USAGES[name]}")


def parse_command(text: str) -> Command:
    """The command in `text`, or a MemrepoError saying what is wrong (with the usage)."""
    if not isinstance(text, str) or not text.strip().startswith("/"):
        raise MemrepoError(AGENT_NOT_A_COMMAND.format(commands=known_commands()))
    stripped = text.strip()
    head, _, rest = stripped.partition("\n")
    word, _, tail = head[1:].partition(" ")
    name = word.strip().lower()
    args = (tail + ("\n" + rest if rest else "")).strip()
    if name not in COMMANDS:
        raise MemrepoError("unknown command {command}; known commands: {commands}".format(command="/" + word.strip(),
                                                                commands=known_commands()))
    if name == "memory-repository":
        return _repository(args)
    if name == "sleeptime":
        return _sleeptime(args)
    if name == "remember":
        if not args:
            raise _usage(name)
        return Command(name, value=args)
    if args:
        raise _usage(name)
    return Command(name)


def _repository(args: str) -> Command:
    parts = args.split()
    if not parts:
        return Command("memory-repository", "status")
    action = parts[0].lower()
    if action not in REPOSITORY_ACTIONS:
        raise _usage("memory-repository")
    if action == "set":
        if len(parts) != 2:
            raise _usage("memory-repository")
        return Command("memory-repository", "set", parts[1])
    if len(parts) != 1:
        raise _usage("memory-repository")
    return Command("memory-repository", action)


def _sleeptime(args: str) -> Command:
    parts = args.lower().split()
    if not parts:
        return Command("sleeptime")
    if parts[0] in ("off", "compaction") and len(parts) == 1:
        return Command("sleeptime", parts[0])
    if parts[0] == "steps" and len(parts) == 2 and parts[1].isascii() and parts[1].isdigit():
        steps = int(parts[1])
        if steps >= 1:
            return Command("sleeptime", "steps", steps)
    raise _usage("sleeptime")
