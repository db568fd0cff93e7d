"""`memrepo ci update`: pin the memrepo running now in the memory repository's validation
workflow, so its CI runs the rules this memrepo runs (bot/ci_pin.py). One line of the file
changes; the person commits it and merges it like any change of the repository's CI."""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.commands import texts
from bot.commands.actions import actions
from bot.errors import MemrepoError

VALIDATE_OLD_CI = ("warning: {workflow} runs memrepo {pinned} in CI, older than this memrepo {running}: CI may "
                   "accept what this one refuses; `memrepo ci update --repo {repo}` pins this one")
CI_UPDATED = ("{workflow}: memrepo {old} -> {new}; memory's rules refuse every change under .github/ (no agent "
              "changes what CI runs), so commit it yourself with `git commit --no-verify` and push it to main")
CI_NO_WORKFLOW = ("{workflow} is missing from {repo}, or names no {action}@<commit> line: `memrepo init` writes "
                  "it; copy it from a new memory")
CI_NEWER = ("{workflow} pins memrepo {old}, newer than this memrepo {new}: nothing changed (upgrade memrepo, "
            "or pass --older to pin this one anyway)")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("ci", help=texts.CI_HELP, description=texts.CI_HELP)
    action = actions(parser, repo_help=texts.REPOSITORY_DIR_HELP)
    update = action("update", "pin the memrepo running now in .github/workflows/memrepo-validate.yml (one line "
                              "changes)", run_update)
    update.add_argument("--older", action="store_true", help=texts.CI_OLDER_HELP)


def shown(pin: object) -> str:
    """`0.1.0 at 0123456789ab (git)`, or the commit alone for a line that says no version."""
    version, source, commit = getattr(pin, "version", None), getattr(pin, "source", None), getattr(pin, "commit", "")
    return f"{version} at {commit[:12]} ({source})" if version else commit[:12]


def run_update(args: argparse.Namespace) -> int:
    from bot import ci_pin
    from bot.memfs import MemoryRepo

    repo = MemoryRepo.open(args.repo)
    path = Path(repo.root) / ci_pin.WORKFLOW
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    old = ci_pin.read_pin(text)
    if old is None:
        raise MemrepoError(CI_NO_WORKFLOW.format(workflow=ci_pin.WORKFLOW, repo=repo.root, action=ci_pin.ACTION))
    new = ci_pin.running_pin()
    if old == new:
        print(f"{ci_pin.WORKFLOW} already pins this memrepo ({shown(new)})")
        return 0
    if ci_pin.age(old, new, ci_pin.is_ancestor(old.commit, new.commit)) == "newer" and not args.older:
        raise MemrepoError(CI_NEWER.format(workflow=ci_pin.WORKFLOW, old=shown(old), new=shown(new)))
    path.write_text(ci_pin.rewrite(text, new), encoding="utf-8")
    print(CI_UPDATED.format(workflow=ci_pin.WORKFLOW, old=shown(old), new=shown(new)))
    return 0


def stale_warning(root: str | Path) -> str | None:
    """The warning `memrepo validate` gives when the memory's workflow pins an older memrepo
    than the one running, else None (no workflow, the same one, a newer one, or not known)."""
    from bot import ci_pin

    try:
        text = (Path(root) / ci_pin.WORKFLOW).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    pinned = ci_pin.read_pin(text)
    if pinned is None:
        return None
    running = ci_pin.running_pin()
    if pinned.commit == running.commit or ci_pin.age(pinned, running, ci_pin.is_ancestor(
            pinned.commit, running.commit)) != "older":
        return None
    return VALIDATE_OLD_CI.format(workflow=ci_pin.WORKFLOW, pinned=shown(pinned), running=shown(running),
                                        repo=root)
