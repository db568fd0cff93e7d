"""When dreams run for this agent: the policy's `dream` section, or the agent's own setting
made with `/sleeptime` (pure parsing; the setting lives in the clone's git configuration, so
it outlives the session but is never pushed: it is the agent's runtime choice, not memory)."""

from __future__ import annotations

from dataclasses import replace

from bot.config import Dream

CONFIG_KEY = "memrepo.sleeptime"


def render_setting(mode: str, steps: int | None = None) -> str:
    """The stored form: `off`, `compaction` or `steps:<N>`."""
    return f"steps:{steps}" if mode == "steps" else mode


def effective(policy: Dream, setting: str | None) -> Dream:
    """The dream policy in force: the repository's, with the agent's setting over it. A stored
    value that does not parse is ignored (the policy stands)."""
    if setting == "off":
        return replace(policy, trigger="off")
    if setting == "compaction":
        return replace(policy, trigger="compaction")
    if setting and setting.startswith("steps:"):
        number = setting[len("steps:"):]
        if number.isascii() and number.isdigit() and int(number) >= 1:
            return replace(policy, trigger="step-count", steps=int(number))
    return policy
