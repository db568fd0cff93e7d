"""`python -m bot.agent.push_guard REMOTE URL`: the judge behind memrepo's pre-push hook
(bot/follow/guard.py installs the hook, which runs this with git's input on standard input).

It routes what a push of `main` adds with the memory tool's own routing (`CommitRouter.route`,
under the policy of the remote's main), so a harness's push cannot land what a tool call would
have proposed. Exit 0 lets the push go; exit 1 refuses it with one line on standard error. A
push that cannot be judged (unreadable repository or policy) is refused: the guard never lets
through what it could not look at. Imports: this module, bot.follow.guard and the router's
module, loaded only when a push touches main (it runs at each of Letta Code's commits).
"""

from __future__ import annotations

import sys

GUARD_FAILED = "memrepo: this push to main could not be judged ({problem}), so it is refused"
GUARD_INPUT_TOO_LONG = "memrepo: the pre-push hook was given more than {limit} characters, so the push is refused"


def main() -> int:
    from bot.follow.guard import MAX_INPUT, to_main, updates

    text = sys.stdin.read(MAX_INPUT + 1)
    if len(text) > MAX_INPUT:
        print(GUARD_INPUT_TOO_LONG.format(limit=MAX_INPUT), file=sys.stderr)
        return 1
    if not to_main(updates(text)):
        return 0
    from pathlib import Path

    from bot.agent.write_path import CommitRouter
    from bot.errors import MemrepoError
    from bot.follow.guard import refusal
    from bot.memfs import MemoryRepo

    try:
        line = refusal(MemoryRepo.open(Path.cwd()), text, CommitRouter())
    except MemrepoError as exc:
        line = GUARD_FAILED.format(problem=exc)
    except Exception as exc:  # a bug: still one line, and the push does not go
        line = GUARD_FAILED.format(problem=f"{type(exc).__name__}: {exc}")
    if line is None:
        return 0
    print(line, file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
