"""A sentence said in one place is written where it is raised or printed; a texts module keeps
only what several modules say, and the CLI's help.

The homes: a package's one `texts.py` (bot/<name>/ counts whole, sub-folders included; bot/*.py
share bot/texts.py; webhooks/ is one package), `localhub/messages.py` (localhub's own words and
GitHub's wording it answers with, kept whole) and, for long prose (pull request bodies, the
models' prompts, the MCP tools' words), the files under templates/. Each constant of a texts
module is read by two or more product modules (bot/, webhooks/, localhub/), or is help that
bot/commands/texts.py gives to `help=`, `description=`, `epilog=`, `usage=` or `repo_help=`
(bot/commands/actions.py's help for `--repo`): a constant with
one reader belongs in that reader, where the sentence is said.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("bot", "webhooks", "localhub")
HELP_HOME = "bot/commands/texts.py"
HELP_KEYWORDS = {"help", "description", "epilog", "usage", "repo_help"}  # repo_help: bot/commands/actions.py


def package_of(relative: str) -> str:
    """The package a module is counted under: bot/<name>/... under bot/<name>, bot/x.py under bot,
    and webhooks/ and localhub/ whole."""
    parts = relative.split("/")
    return "/".join(parts[:2]) if parts[0] == "bot" and len(parts) > 2 else parts[0]


def module_name(relative: str) -> str:
    parts = relative.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def product_modules() -> dict[str, str]:
    """Each product module's source, by its path from the root."""
    return {str(path.relative_to(ROOT)): path.read_text(encoding="utf-8")
            for top in PRODUCT for path in sorted((ROOT / top).rglob("*.py"))}


def texts_modules(modules: dict[str, str]) -> list[str]:
    return [relative for relative in modules if relative.endswith("/texts.py") or relative == "texts.py"]


def constants(source: str) -> list[str]:
    """The UPPER_CASE names a module assigns at its top level."""
    names = []
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) \
            else []
        names += [target.id for target in targets if isinstance(target, ast.Name) and target.id[:1].isalpha()
                  and target.id.isupper()]
    return names


def _absolute(relative: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module_name(relative).split(".")
    if not relative.endswith("__init__.py"):
        package = package[:-1]
    return ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))


def _in_help(parents: dict[ast.AST, ast.AST], node: ast.AST) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.keyword) and node.arg in HELP_KEYWORDS:
            return True
        if isinstance(node, ast.stmt):
            return False
    return False


def readers(relative: str, source: str, homes: dict[str, str]) -> dict[tuple[str, str], bool]:
    """(texts module, constant) -> whether it is given as help, for each constant a module reads:
    `alias.NAME` after `from pkg import texts as alias`, or `NAME` after `from pkg.texts import NAME`."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    aliases: dict[str, str] = {}
    direct: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = _absolute(relative, node)
            for alias in node.names:
                if f"{module}.{alias.name}" in homes:
                    aliases[alias.asname or alias.name] = homes[f"{module}.{alias.name}"]
                elif module in homes:
                    direct[alias.asname or alias.name] = (homes[module], alias.name)
    found: dict[tuple[str, str], bool] = {}
    for node in ast.walk(tree):
        key = None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            key = (aliases[node.value.id], node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in direct:
            key = direct[node.id]
        if key is not None:
            found[key] = found.get(key, False) or _in_help(parents, node)
    return found


def lonely_constants(modules: dict[str, str]) -> list[str]:
    """The constants of texts modules that fewer than two product modules read, CLI help aside."""
    homes = {module_name(relative): relative for relative in texts_modules(modules)}
    read_by: dict[tuple[str, str], set[str]] = defaultdict(set)
    help_given: set[tuple[str, str]] = set()
    for relative, source in modules.items():
        if relative in homes.values():
            continue
        for key, as_help in readers(relative, source, homes).items():
            read_by[key].add(relative)
            if as_help:
                help_given.add(key)
    lonely = []
    for home in homes.values():
        for name in constants(modules[home]):
            key = (home, name)
            if home == HELP_HOME and key in help_given:
                continue
            if len(read_by[key]) < 2:
                lonely.append(f"{home}:{name} read by {sorted(read_by[key]) or 'no module'}")
    return lonely


# ----------------------------------------------------------------- the checks on small trees
def test_a_constant_read_by_one_module_is_lonely_and_one_read_by_two_is_not() -> None:
    modules = {
        "bot/x/texts.py": 'ONE = "said once"\nTWO = "said twice"\nDEAD = "said nowhere"\n',
        "bot/x/a.py": "from bot.x import texts\n\ndef f():\n    raise ValueError(texts.ONE + texts.TWO)\n",
        "bot/x/b.py": "from bot.x.texts import TWO\n\nprint(TWO)\n",
    }
    assert lonely_constants(modules) == ["bot/x/texts.py:ONE read by ['bot/x/a.py']",
                                         "bot/x/texts.py:DEAD read by no module"]


def test_the_clis_help_stays_with_one_reader_but_its_other_sentences_do_not() -> None:
    modules = {
        HELP_HOME: 'AT_HELP = "memory at a date"\nAT_DONE = "the memory at that date is shown"\n',
        "bot/commands/at.py": ("from bot.commands import texts as say\n\n"
                               'def register(sub):\n    sub.add_parser("at", help=say.AT_HELP)\n'
                               "    print(say.AT_DONE)\n"),
    }
    assert lonely_constants(modules) == ["bot/commands/texts.py:AT_DONE read by ['bot/commands/at.py']"]


def test_a_relative_import_and_a_texts_module_reading_another_are_followed_as_python_does() -> None:
    modules = {
        "bot/y/texts.py": 'BASE = "a base sentence here"\n',
        "bot/y/other_texts_user.py": "from . import texts\nX = texts.BASE\n",
        "bot/z/texts.py": "from bot.y.texts import BASE\nMORE = BASE + '!'\n",
        "bot/z/m.py": "from bot.z import texts\nY = texts.MORE\n",
    }
    assert lonely_constants(modules) == ["bot/y/texts.py:BASE read by ['bot/y/other_texts_user.py']",
                                         "bot/z/texts.py:MORE read by ['bot/z/m.py']"]


def test_packages_are_counted_whole() -> None:
    assert package_of("bot/memfs/format/texts.py") == package_of("bot/memfs/texts.py") == "bot/memfs"
    assert package_of("bot/texts.py") == "bot" and package_of("webhooks/intake/github.py") == "webhooks"


# ----------------------------------------------------------------- the whole tree
@pytest.fixture(scope="module")
def modules() -> dict[str, str]:
    return product_modules()


def test_every_constant_of_a_texts_module_is_said_by_two_modules_or_is_the_clis_help(
        modules: dict[str, str]) -> None:
    assert lonely_constants(modules) == []


def test_a_package_has_at_most_one_texts_module(modules: dict[str, str]) -> None:
    by_package: dict[str, list[str]] = defaultdict(list)
    for relative in [*texts_modules(modules), "localhub/messages.py"]:
        by_package[package_of(relative)].append(relative)
    assert {package: found for package, found in by_package.items() if len(found) > 1} == {}


def test_long_prose_lives_in_templates() -> None:
    """Pull request bodies, the models' prompts and the MCP tools' words are templates, not code."""
    for folder in ("pr", "prompts", "mcp"):
        assert list((ROOT / "templates" / folder).glob("*")), folder
