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

Names load on first use (PEP 562): a hook that only reads a ref must not pay for libgit2
(nor for `typing`, 5 ms, which is why nothing here is annotated with it).
"""

from __future__ import annotations

import importlib

# name -> "module" (the module itself, a namespace of rules) or "module:attribute"
_EXPORTS: dict[str, str] = {
    # store/
    "MemoryRepo": "store.repo:MemoryRepo",
    "MAIN": "store.repo:MAIN",
    "CommandSnapshot": "store.git_command:CommandSnapshot",
    "memory_layout": "store.checks:memory_layout",
    "checks": "store.checks",
    "refs": "store.refs",
    # format/
    "layout": "format.layout",
    "V1": "format.layout:V1",
    "V2": "format.layout:V2",
    "INDEX": "format.layout:INDEX",
    "is_core": "format.layout:is_core",
    "is_index": "format.layout:is_index",
    "document": "format.document",
    "paths": "format.paths",
    "validate": "format.validate",
    "format_problems": "format.validate:format_problems",
    "archival": "format.archival",
    "LETTA_CONFIG_FILE": "format.constraints:CONFIG_FILE",
    # tool/
    "MemoryTool": "tool.memory_tool:MemoryTool",
    "ToolResult": "tool.memory_tool:ToolResult",
    "Committed": "tool.memory_tool:Committed",
    "configured_agent_id": "tool.memory_tool:configured_agent_id",
    "AGENT_NAME_KEY": "tool.memory_tool:AGENT_NAME_KEY",
    "Call": "tool.calls:Call",
    "parse_call": "tool.calls:parse_call",
    "named_command": "tool.calls:named_command",
    "SEARCH_COMMANDS": "tool.calls:SEARCH_COMMANDS",
    "WRITE_COMMANDS": "tool.calls:WRITE_COMMANDS",
    "SEARCH_PAGE_SIZE": "tool.calls:SEARCH_PAGE_SIZE",
    "SEARCH_MAX_LIMIT": "tool.calls:SEARCH_MAX_LIMIT",
    "edits": "tool.edits",
    # prompt/
    "PromptCompiler": "prompt.compiler:PromptCompiler",
    "CompiledPrompt": "prompt.compiler:CompiledPrompt",
    "DEFAULT_MEMORY_DIR": "prompt.compile:DEFAULT_MEMORY_DIR",
    "Entry": "prompt.compile:Entry",
    "CORE": "prompt.compile:CORE",
    "EXTERNAL": "prompt.compile:EXTERNAL",
    "SKILL": "prompt.compile:SKILL",
    "NO_CONTENT": "prompt.compile:NO_CONTENT",
    "entry_kind": "prompt.compile:kind",
    "needs_content": "prompt.compile:needs_content",
    "read_document": "prompt.compile:read_document",
    "render_tree": "prompt.compile:render_tree",
    "trim_blank_lines": "prompt.compile:trim_blank_lines",
    # merge/
    "Resolver": "merge.markdown:Resolver",
    "ResolveRequest": "merge.markdown:ResolveRequest",
    "ResolverError": "merge.markdown:ResolverError",
    "resolve_tree": "merge.markdown:resolve_tree",
    # history/
    "at": "history.travel:at",
    "compile_at": "history.travel:compile_at",
    "parse_when": "history.travel:parse_when",
    "iso": "history.travel:iso",
    "file_path": "history.travel:file_path",
    "main_ref": "history.travel:main_ref",
    "ref_name": "history.travel:ref_name",
    "main_landings": "history.travel:main_landings",
    "main_timeline": "history.travel:main_timeline",
    "BeforeHistoryError": "history.travel:BeforeHistoryError",
    "PathNotInMemoryError": "history.travel:PathNotInMemoryError",
    "REPORT_VERSION": "history.travel:REPORT_VERSION",
    "timeline": "history.timeline",
    "blame": "history.blame:blame",
    # shared/
    "shared_projection": "shared.projection",
    "shared_record": "shared.record",
    "shared_texts": "shared.texts",
    # how a memory begins
    "init_repository": "create:init_repository",
    "clone_repository": "clone:clone_repository",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    where = _EXPORTS.get(name)
    if where is None:
        texts = importlib.import_module(f"{__name__}.texts")
        raise AttributeError(texts.NO_ATTRIBUTE.format(module=__name__, name=name))
    module, _, attribute = where.partition(":")
    found = importlib.import_module(f"{__name__}.{module}")
    value = getattr(found, attribute) if attribute else found
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
