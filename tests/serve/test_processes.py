"""One file per process, read from the source: the receiver, the worker, the palace server and
`serve --local` are each built in one module of bot/serve/, named for it, and the CLI commands
that start them only parse flags and call that module's `run`. The receiver's code is the
top-level webhooks/ package, and the stack run as a child process (a test helper) is in tests/.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("bot", "webhooks", "localhub")

# The process, the module that builds it, and the command module that starts it.
PROCESSES = {
    "receiver": ("bot/serve/receiver.py", "bot/commands/serve.py"),
    "worker": ("bot/serve/worker.py", "bot/commands/worker.py"),
    "palace server": ("bot/serve/palace_server.py", "bot/commands/palace.py"),
    "serve --local": ("bot/serve/local.py", "bot/commands/serve.py"),
}

# What builds a process, and the one product module allowed to do it.
BUILDERS = {
    "Receiver": "bot/serve/receiver.py",  # webhooks.asgi.Receiver: the receiver's ASGI application
    "ReceiverServer": "bot/serve/receiver.py",  # the receiver on uvicorn, on a thread
    "Worker": "bot/serve/worker.py",  # bot.queue.Worker: the integrator's rq worker
    "BaseApplication": "bot/serve/receiver.py",  # gunicorn, in production
    "Arbiter": "bot/serve/receiver.py",
    "UvicornWorker": "bot/serve/receiver.py",
    "Reconciler": "bot/serve/worker.py",
}
# Modules only a process's own module may import.
SERVERS = ("gunicorn", "uvicorn_worker", "rq", "webhooks")
COMMANDS = ("bot/commands/serve.py", "bot/commands/worker.py", "bot/commands/palace.py")


def product_modules() -> Iterator[Path]:
    for top in PRODUCT:
        yield from sorted((ROOT / top).rglob("*.py"))


def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


def called_names(module: ast.Module) -> Iterator[tuple[str, int]]:
    """The names called in `module` (`Receiver(...)`, `rq.Worker(...)`), with their lines, and
    the bases of its classes (a subclass builds what it extends)."""
    for node in ast.walk(module):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if name:
                yield name, node.lineno
        elif isinstance(node, ast.ClassDef):
            for base in node.bases:
                name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else None
                if name:
                    yield name, node.lineno


def imported(module: ast.Module) -> Iterator[str]:
    for node in ast.walk(module):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


@pytest.mark.parametrize("process", sorted(PROCESSES))
def test_each_process_is_built_in_its_own_module_of_bot_serve(process: str) -> None:
    module, command = PROCESSES[process]
    path = ROOT / module
    assert path.is_file(), f"{process}: no {module}"
    runs = [node for node in tree(path).body if isinstance(node, ast.FunctionDef) and node.name == "run"]
    assert runs, f"{module} has no run(): the {process} is started there"
    calls = {target for target in imported(tree(ROOT / command)) if target.startswith("bot.serve.")}
    assert module.removesuffix(".py").replace("/", ".") in {c.rpartition(".")[0] for c in calls} | calls


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_what_builds_a_process_is_used_in_that_process_module_alone(name: str) -> None:
    used = sorted(f"{relative(path)}:{line}" for path in product_modules() for called, line in called_names(tree(path))
                  if called == name and relative(path) != BUILDERS[name])
    assert used == []


@pytest.mark.parametrize("command", COMMANDS)
def test_a_command_only_parses_flags_and_calls_its_process(command: str) -> None:
    source = tree(ROOT / command)
    assert [node.name for node in ast.walk(source) if isinstance(node, ast.ClassDef)] == []
    servers = sorted(name for name in imported(source)
                     if any(name == s or name.startswith(s + ".") for s in (*SERVERS, "uvicorn", "redis")))
    assert servers == []


def test_servers_are_imported_by_the_process_modules_alone() -> None:
    allowed = {module for module, _ in PROCESSES.values()} | {"bot/serve/palace.py"}
    found = sorted(f"{relative(path)} imports {name}" for path in product_modules()
                   if relative(path) not in allowed and not relative(path).startswith("webhooks/")
                   for name in imported(tree(path))
                   if any(name == s or name.startswith(s + ".") for s in ("gunicorn", "uvicorn_worker", "webhooks")))
    assert found == []


def test_the_receivers_code_is_the_top_level_webhooks_package() -> None:
    assert (ROOT / "webhooks" / "intake" / "__init__.py").is_file()
    assert (ROOT / "webhooks" / "streams" / "__init__.py").is_file()
    assert (ROOT / "webhooks" / "asgi.py").is_file() and (ROOT / "webhooks" / "texts.py").is_file()
    assert not (ROOT / "receiver").exists()


def test_the_stack_as_a_child_process_is_a_test_helper() -> None:
    assert not (ROOT / "bot" / "serve" / "child.py").exists()
    assert (ROOT / "tests" / "served.py").is_file()
    assert not (ROOT / "bot" / "serve" / "gunicorn_worker.py").exists()  # the receiver's own module has it
