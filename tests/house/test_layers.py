"""The layers docs/architecture.md §2 promises, read from the source: every import in bot/ and webhooks/,
those inside functions included, so a lazy import cannot slip past.

- the memory core (bot.memfs) and the transcripts (bot.transcript) know nothing above them, and
  the rest of memrepo enters the memory core by its front door;
- the forge client, and localhub (the forge on this machine), know no policy and no memory;
- the pull-request package sits below the writers: it imports no dream, agent, integrator or
  anything else above it but the forge client;
- the webhook receiver does no git and calls no GitHub, through any module it loads;
- no two packages import each other, directly or around a longer loop, and no two modules either;
- every module is on a line of the Layout block (docs/layout.md) and imports nothing from a line above
  its own, and the Layout table names every module;
- no product module is over 600 lines.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OURS = ("bot", "webhooks", "localhub")
ABOVE_THE_CORE = ("bot.forge", "bot.dream", "bot.follow", "bot.integrator", "bot.agent", "bot.notify", "bot.mcp",
                  "bot.provenance", "bot.serve", "bot.commands", "bot.demo", "bot.cli", "bot.queue", "bot.repo_lock",
                  "bot.dedupe", "bot.palace", "bot.access", "bot.claude_code", "bot.codex", "bot.pullrequest",
                  "webhooks", "localhub")
GIT = ("git", "pygit2", "bot.memfs")
# The one way past the memory core's door: a hook's fast path imports the leaves it needs, since
# Python loads a package's `__init__` first and a harness pays for every millisecond of a hook.
HOOK_LEAVES = {"bot.claude_code.hook": {"bot.memfs.store.refs", "bot.memfs.prompt.compiler",
                                        "bot.memfs.store.git_command"},
               "bot.claude_code.state": {"bot.memfs.store.refs"}}
GITHUB = ("github", "bot.forge", "localhub")


@cache
def modules() -> dict[str, Path]:
    """Every module of ours by dotted name (a package by its own name)."""
    found = {}
    for top in OURS:
        for path in (ROOT / top).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _imported(name: str, path: Path) -> Iterator[str]:
    """The modules `name` imports anywhere in its body, as dotted names (`from a import b` is
    `a.b` when that is a module of ours, else `a`)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:
                full = f"{source}.{alias.name}"
                yield full if full in modules() else source


@cache
def imports() -> dict[str, frozenset[str]]:
    return {name: frozenset(_imported(name, path)) for name, path in modules().items()}


def within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def loaded_with(name: str) -> set[str]:
    """Every module importing `name` can load (a module loads its parent packages too)."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        parts = current.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
        todo += list(imports().get(current, ()))
    return seen


def group(name: str) -> str:
    """The package a module belongs to for the cycle rule: bot's sub-packages, the receiver,
    localhub, or a top-level module of bot on its own."""
    parts = name.split(".")
    if parts[0] in ("webhooks", "localhub"):
        return parts[0]
    if len(parts) > 1 and (ROOT / "bot" / parts[1]).is_dir():
        return "bot." + parts[1]
    return name


def edges() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for source, targets in imports().items():
        for target in targets:
            if within(target, OURS) and group(source) != group(target):
                graph.setdefault(group(source), set()).add(group(target))
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One loop through each strongly connected set of more than one package (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            members = []
            while True:
                member = stack.pop()
                members.append(member)
                if member == node:
                    break
            if len(members) > 1:
                found.append(sorted(members))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def offenders(prefix: str, forbidden: tuple[str, ...]) -> list[str]:
    return sorted(f"{source} imports {target}" for source, targets in imports().items() if within(source, (prefix,))
                  for target in targets if within(target, forbidden))


def test_the_reader_sees_lazy_and_relative_imports(tmp_path: Path) -> None:
    """The rules below are only as good as the reader: it must see an import inside a function
    and a relative one."""
    source = tmp_path / "checks.py"
    source.write_text("import os\nfrom . import repo\nfrom ...config import Policy\n\n"
                      "def later():\n    from bot.forge.client import ForgeClient\n    import github\n")
    assert set(_imported("bot.memfs.store.checks", source)) == {"os", "bot.memfs.store.repo", "bot.config",
                                                                 "bot.forge.client", "github"}
    assert "bot.memfs.store.repo" in imports()["bot.memfs.sync.push"]


@pytest.mark.parametrize("core", ["bot.memfs", "bot.transcript"])
def test_the_core_knows_nothing_above_it(core: str) -> None:
    other_core = "bot.transcript" if core == "bot.memfs" else "bot.memfs"
    assert offenders(core, (*ABOVE_THE_CORE, other_core, "github", "flask", "rq")) == []


@pytest.mark.parametrize("forge", ["bot.forge", "localhub"])
def test_the_forge_knows_no_policy_and_no_memory(forge: str) -> None:
    assert offenders(forge, ("bot.config", "bot.memfs", "bot.transcript", "bot.dream", "bot.integrator",
                             "bot.agent", "bot.notify", "bot.mcp", "bot.provenance", "bot.queue", "bot.repo_lock",
                             "bot.dedupe")) == []


def test_localhub_stands_alone() -> None:
    """localhub is GitHub on this machine: it must serve any client as GitHub would, so
    nothing of memrepo's may shape its answers."""
    assert offenders("localhub", ("bot",)) == []


def test_the_pull_request_package_is_below_the_writers() -> None:
    """What a dream, an agent's edit, the integrator and `why` share (the provenance block, the
    forge target, the branch) imports none of them, so every writer can use it."""
    above = tuple(p for p in ABOVE_THE_CORE if p not in ("bot.forge", "bot.pullrequest", "localhub"))
    assert {"bot.dream", "bot.agent", "bot.integrator"} <= set(above)
    assert offenders("bot.pullrequest", above) == []


@pytest.mark.parametrize("module", sorted(m for m in modules() if within(m, ("webhooks",))))
def test_the_webhook_receiver_does_no_git_and_calls_no_github(module: str) -> None:
    reached = loaded_with(module)
    assert sorted(m for m in reached if within(m, GIT + GITHUB)) == []


def test_the_rest_of_memrepo_enters_the_memory_core_by_its_front_door() -> None:
    """bot/memfs is a folder per concern behind one door (its `__init__`) and sync's own
    (`bot/memfs/sync/__init__`): what stands behind them can move without the rest noticing.
    The core's sentences (`bot/memfs/texts.py`) are in plain sight too, for a caller that says
    one on the core's behalf."""
    doors = ("bot.memfs", "bot.memfs.sync", "bot.memfs.texts")
    past_the_door = sorted(f"{source} imports {target}" for source, targets in imports().items()
                           if not within(source, ("bot.memfs",)) for target in targets
                           if within(target, ("bot.memfs",)) and target not in doors
                           and target not in HOOK_LEAVES.get(source, ()))
    assert past_the_door == []


def test_no_two_packages_import_each_other() -> None:
    assert cycles(edges()) == []


def module_edges() -> dict[str, set[str]]:
    """Module to module, lazy imports included; a package's `__init__` importing what is inside it
    is no loop (Python loads the package first), a module importing its own package is."""
    graph: dict[str, set[str]] = {}
    for source, targets in imports().items():
        inside = source if modules()[source].name == "__init__.py" else None
        for target in targets:
            if target in modules() and target != source and not (inside and within(target, (inside,))):
                graph.setdefault(source, set()).add(target)
    return graph


def test_no_two_modules_import_each_other() -> None:
    """Within a package too: a module that needs a piece of a sibling which needs it back has
    that piece moved down into a module both import."""
    assert cycles(module_edges()) == []


def test_a_loop_between_packages_is_seen() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_every_package_is_installed() -> None:
    """A package missing from pyproject's list works in an editable install and is absent from
    a real one (the memory repositories' CI installs memrepo that way)."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for top in OURS for p in (ROOT / top).rglob("__init__.py")}
    assert found - listed == set()


# ------------------------------------------------------------------- the layout's tiers
LAYOUT = ROOT / "docs" / "layout.md"

def readme_tiers() -> list[list[str]]:
    """The Layout block (docs/layout.md), top (entry points) to bottom (shared, low): on each line the
    packages and modules it names, as dotted names. A line that starts with blanks goes on with
    the line above; lines naming only modules of bot/ itself (the shared, low ones) are one tier."""
    text = LAYOUT.read_text(encoding="utf-8")
    block = text[text.index("# Layout"):].split("```")[1]
    tiers: list[list[str]] = []
    low: list[bool] = []
    for line in block.strip("\n").splitlines():
        names = [m.removesuffix("/").removesuffix(".py").replace("/", ".")
                 for m in re.findall(r"(?:bot|webhooks|localhub)/[A-Za-z0-9_/]*(?:\.py)?", line)]
        only_modules = bool(names) and all(n.count(".") == 1 and (ROOT / f"{n.replace('.', '/')}.py").is_file()
                                           for n in names)
        if tiers and (line.startswith(" ") or (only_modules and low[-1])):
            tiers[-1].extend(names)
        elif names:
            tiers.append(names)
            low.append(only_modules)
    return tiers


def tier_of(name: str, tiers: list[list[str]]) -> int | None:
    """The layout tier of a module: that of the longest entry it is, or is inside."""
    found = [(len(entry), index) for index, names in enumerate(tiers) for entry in names if within(name, (entry,))]
    return max(found)[1] if found else None


def test_every_module_has_a_tier_in_the_readme() -> None:
    tiers = readme_tiers()
    assert [name for name in modules() if name not in OURS and tier_of(name, tiers) is None] == []


def test_no_module_imports_a_higher_tier_than_its_own() -> None:
    tiers = readme_tiers()
    upward = [f"{name} (tier {tier_of(name, tiers)}) imports {other} (tier {tier_of(other, tiers)})"
              for name, imported in imports().items() if name not in OURS
              for other in imported if other in modules() and other not in OURS
              and (tier_of(other, tiers) or 0) < (tier_of(name, tiers) or 0)]
    assert upward == []


def layout_rows() -> dict[str, str]:
    """The Layout table (docs/layout.md): each path it names in its first column -> the row's text."""
    text = LAYOUT.read_text(encoding="utf-8")
    rows: dict[str, str] = {}
    for line in text[text.index("# Layout"):].splitlines():
        if line.startswith("| `"):
            first, _, rest = line[1:].partition("|")
            for path in re.findall(r"`([^`]+)`", first):
                rows[path.rstrip("/").replace("/", ".")] = rest
    return rows


def test_the_readme_layout_names_every_module_of_every_package() -> None:
    """Each module is named in the row of its package, or of the nearest package above it that
    has one (bot/memfs's row names `sync/` and its modules); bot's own modules are on the tiers'
    lines."""
    rows, tiers = layout_rows(), readme_tiers()
    unnamed = []
    for name, path in modules().items():
        if path.name == "__init__.py" or name in OURS:
            continue
        package, _, stem = name.rpartition(".")
        if package == "bot":
            named = any(name in tier for tier in tiers)
        else:
            owner = next((p for p in (package, *_ancestors(package)) if p in rows), None)
            named = owner is not None and re.search(rf"`{re.escape(stem)}(\.py)?`", rows[owner]) is not None
        if not named:
            unnamed.append(name)
    assert unnamed == []


def _ancestors(package: str) -> list[str]:
    parts = package.split(".")
    return [".".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]


MOST_LINES = 600  # a module longer than this holds more than one concern; split it by concern


def test_no_product_module_is_over_600_lines() -> None:
    long = {name: n for name, path in modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MOST_LINES}
    assert long == {}
