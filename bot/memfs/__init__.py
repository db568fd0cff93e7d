"""The memory core: a git repository of markdown files, its rules, its tool, its prompt and its sync.

This is the front door: the rest of memrepo imports the core from here (or its remote from
`bot.memfs.sync`), never from the folders behind it, which are free to move. One folder per
concern:

    format/    what memory may hold (layouts, a file's frontmatter, paths, validation); pure
    store/     the repository on disk (libgit2, refs read from files, the git command)
    tool/      the memory tool: a call parsed, planned against HEAD, committed
    prompt/    memory compiled into the system prompt, cached per HEAD
    merge/     the three-way merge, markdown-aware for memory files; pure
    history/   time travel over main: `at`, its timeline, blame
    shared/    shared memories attached to this one: the record, the rules, the projections
    sync/      main kept in step with its remote, never force-pushing
    create.py, clone.py: how a memory begins (`memrepo init`, `memrepo clone`)

What the door offers is the plain imports below: an editor follows them and a type checker reads
them. They run when a name is first asked for (PEP 562), not when the package loads: Python loads
this file before any module behind it, and loading them all costs a process about eight times
an empty interpreter (bench/claude_code_hook.py, `eager_door`), where a quiet prompt's hook
costs 1.3 times. So a hook's fast path (bot/claude_code/hook.py, bot/codex/hook.py) that
imports a leaf such as `bot.memfs.store.refs` pays for that leaf only.
The door offers classes, functions, errors and rule modules; a constant passes only when several
packages need it, the others are read from their module (`calls.SEARCH_PAGE_SIZE`).
"""

# ruff: noqa: F401  (the imports below are what the door offers, not what this file uses)
from __future__ import annotations

TYPE_CHECKING = False  # `typing` costs a hook 5 ms; type checkers read this name as theirs
if TYPE_CHECKING:
    from .clone import clone_repository
    from .create import init_repository
    from .format import archival, document, layout, paths, validate
    from .format.layout import V1, V2, is_core, is_index
    from .format.validate import format_problems
    from .history import timeline
    from .history.blame import blame
    from .history.travel import (
        REPORT_VERSION,
        BeforeHistoryError,
        PathNotInMemoryError,
        at,
        compile_at,
        file_path,
        iso,
        main_landings,
        main_ref,
        main_timeline,
        parse_when,
        ref_name,
    )
    from .merge.markdown import Resolver, ResolveRequest, ResolverError, resolve_tree
    from .prompt import compile as compile_rules
    from .prompt.compile import DEFAULT_MEMORY_DIR, Entry, needs_content, read_document, render_tree, trim_blank_lines
    from .prompt.compile import kind as entry_kind
    from .prompt.compiler import CompiledPrompt, PromptCompiler
    from .shared import projection as shared_projection
    from .shared import record as shared_record
    from .store import checks, refs
    from .store.checks import memory_layout
    from .store.repo import MAIN, MemoryRepo, configured_agent_id, configured_agent_name
    from .tool import calls, edits
    from .tool.calls import Call, named_command, parse_call
    from .tool.memory_tool import Committed, MemoryTool, ToolResult

# The front door (__init__.py) asked for a name it does not export, in Python's own words.
NO_ATTRIBUTE = "module {module!r} has no attribute {name!r}"

_offered: dict[str, tuple[str, str]] = {}  # name -> (module, attribute), read from the imports above


def _where(name: str) -> tuple[str, str] | None:
    """Where the door's plain import of `name` takes it from: the lines above are the one list."""
    if not _offered:
        import ast

        with open(__file__, encoding="utf-8") as source:
            tree = ast.parse(source.read())
        block = next(node for node in tree.body if isinstance(node, ast.If)
                     and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
        _offered.update({alias.asname or alias.name: (f"{__name__}.{line.module}", alias.name)
                         for line in block.body if isinstance(line, ast.ImportFrom) for alias in line.names})
    return _offered.get(name)


def __getattr__(name: str) -> object:
    if name == "__all__":
        _where(name)
        return sorted(_offered)
    where = _where(name)
    if where is None:
        raise AttributeError(NO_ATTRIBUTE.format(module=__name__, name=name))
    import importlib

    module, attribute = where
    found = importlib.import_module(module)
    value = getattr(found, attribute) if hasattr(found, attribute) else importlib.import_module(f"{module}.{attribute}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    _where("__all__")
    return sorted({*globals(), *_offered})
