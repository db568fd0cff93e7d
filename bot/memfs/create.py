"""`memrepo init`: a new memory repository from `templates/memory/` (a v1 memory; for v2,
`templates/memory-v2/` replaces its `system/` and adds what differs), its first commit and
its pre-commit hook."""

from __future__ import annotations

import os
import shutil
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pygit2

from bot import ci_pin, identity
from bot.config import CONFIG_PATH, parse_policy
from bot.errors import MemrepoError
from bot.memfs.format import constraints
from bot.memfs.format.layout import LAYOUTS, V1, V2
from bot.memfs.store.repo import AGENT_ID_KEY, AGENT_NAME_KEY, MAIN, MemoryRepo, pin_checkout
from bot.templating import render, templates_root

INIT_LAYOUT = "unknown memory layout '{layout}'; use one of: {layouts}"
# Making a memory repository (create.py).
INIT_NOT_DIR = "{path} is a file; give a new or empty folder for the memory repository"
INIT_NOT_EMPTY = (
    "{path} is {what}; memrepo init only creates a memory repository in a new or empty folder "
    "(to connect an existing memory repository to a remote, use `memrepo repository set URL`)"
)
FOLDER_CANNOT_MAKE = "cannot make the folder {path}: {reason}; nothing was made: choose another folder"
INIT_COMMIT = "Create memory repository"

TEMPLATE_DIR = "memory"
TEMPLATE_DIRS = {V1: (TEMPLATE_DIR,), V2: (TEMPLATE_DIR, "memory-v2")}
V1_ONLY = "system/"  # v2's core memory is at the root

# The GitHub Action the memory repository's validation workflow runs (this project's action.yml),
# pinned by commit so that no later push to memrepo, and no package someone registers under its
# name, runs in a memory repository's CI: the commit of the memrepo that writes it where that is
# known, else the release's (bot/ci_pin.py).
VALIDATE_ACTION = ci_pin.ACTION
VALIDATE_ACTION_COMMIT = ci_pin.RELEASE_COMMIT


def template_files(agent_id: str, agent_name: str, layout: str = V1) -> dict[str, bytes]:
    """The files of a new memory repository: `*.j2` rendered, everything else verbatim, and
    Letta Code's `.memfs.config.json` holding the limits of its `.memrepo/config.yml`."""
    out: dict[str, bytes] = {}
    pin = ci_pin.line(ci_pin.running_pin())
    for folder in TEMPLATE_DIRS[layout]:
        root = templates_root() / folder
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            rel = path.relative_to(root).as_posix()
            if layout == V2 and folder == TEMPLATE_DIR and rel.startswith(V1_ONLY):
                continue
            if rel.endswith(".j2"):
                text = render(f"{folder}/{rel}", agent_id=agent_id, agent_name=agent_name,
                              action=VALIDATE_ACTION, pin=pin)
                out[rel[: -len(".j2")]] = text.encode("utf-8")
            else:
                out[rel] = path.read_bytes()
    limits = parse_policy(out[CONFIG_PATH].decode("utf-8")).limits
    out[constraints.CONFIG_FILE] = constraints.render(limits, layout).encode("utf-8")
    return dict(sorted(out.items()))


def install_hook(repo: MemoryRepo) -> Path:
    hook = Path(repo.git.path) / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(render("hooks/pre-commit.j2", python=sys.executable), encoding="utf-8")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return hook


def init_repository(
    directory: str | os.PathLike[str], agent_id: str = "agent", agent_name: str | None = None,
    layout: str = V1,
) -> MemoryRepo:
    """Create a memory repository (`layout` v1 or v2) in a new or empty folder; refuses to
    touch anything else."""
    if layout not in LAYOUTS:
        raise MemrepoError(INIT_LAYOUT.format(layout=layout, layouts=", ".join(LAYOUTS)))
    agent_id = identity.check_agent_id(agent_id)
    agent_name = (agent_name or agent_id).strip() or agent_id
    root = Path(directory).expanduser()
    with fresh_folder(root, INIT_NOT_DIR, INIT_NOT_EMPTY):
        git = pygit2.init_repository(str(root), initial_head=MAIN)
        pin_checkout(git)
        files = template_files(agent_id, agent_name, layout)
        index = git.index
        for rel, data in files.items():
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            index.add(rel)
        index.write()
        # The agent's own identity, whoever runs init: memory's history starts with the agent it
        # is made for (`memrepo log` and `why` say so), and no personal address from this
        # machine's git configuration goes into a repository meant to be shared on a forge.
        author = identity.agent(agent_id, agent_name)
        signature = pygit2.Signature(author.name, author.email)
        git.create_commit("HEAD", signature, signature, INIT_COMMIT,
                          index.write_tree(), [])
        repo = MemoryRepo(root.resolve(), git)
        set_agent(repo, agent_id, agent_name)
        install_hook(repo)
        return repo


def set_agent(repo: MemoryRepo, agent_id: str, agent_name: str) -> None:
    """Name the agent this clone writes for, so its tool calls, sessions and MCP server commit
    as that agent without being told each time (`configured_agent_id`)."""
    repo.set_config(AGENT_ID_KEY, agent_id)
    repo.set_config(AGENT_NAME_KEY, agent_name)


@contextmanager
def fresh_folder(root: Path, not_dir: str, not_empty: str) -> Iterator[Path]:
    """A new or empty folder to fill (`init`, `clone`), left as it was found if filling it fails:
    the folders this made are removed, a folder that was there and empty is emptied again, so a
    refusal leaves nothing behind. `not_dir` and `not_empty` are the refusals' texts ({path},
    and {what} for the second)."""
    if root.exists() and not root.is_dir():
        raise MemrepoError(not_dir.format(path=root))
    if root.exists() and any(root.iterdir()):
        what = "a git repository" if (root / ".git").exists() else "not empty"
        raise MemrepoError(not_empty.format(path=root, what=what))
    top = root.absolute()
    while not top.parent.exists():
        top = top.parent  # the topmost folder this call creates, removed on failure
    created = None if root.exists() else top
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file where a folder above it should be, no permission, ...
        raise MemrepoError(FOLDER_CANNOT_MAKE.format(path=root, reason=exc.strerror or exc)) from None
    try:
        yield root
    except BaseException:
        if created is not None:
            shutil.rmtree(created, ignore_errors=True)
        else:  # the folder was there and empty: empty it again
            for child in root.iterdir():
                shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
        raise
