"""Sentences for people and agents live in their homes, not in the code that says them.

The homes: a module named `texts.py` (a package's own sentences),
`localhub/messages.py` (localhub's own words and GitHub's wording it answers with) and the
files under templates/. `strays` reads a product module (bot/, webhooks/, localhub/) with `ast`
and reports every sentence written as a literal where a person or an agent will read it.

A literal reads as a sentence when three words follow each other on one of its lines: tokens
separated by spaces that, once surrounding punctuation (`.,;:!?()[]"'`) is stripped, are letters
only (an apostrophe inside is allowed; a hyphenated token, and a token of capitals only such as
SQL's SELECT or git's HEAD, is no word). An f-string's `{...}` and a `str.format` field are no
words. A text with " = " or "==" in it is code (SQL, Lua), not prose. So "the answer is empty"
and f"unknown keys {k} (expected summary and calls)" are sentences; "Not Found",
"memrepo/validate", "--repo DIR", "{path}: {problem}" and "SELECT * FROM users WHERE id = ?"
are not.

Where a literal counts (its sink), anywhere inside the expression given to it (concatenations,
`.format` on a literal, a helper's arguments, dict and list displays; never a literal compared,
as in `x in ("...", ...)`, which is matched, not said):
- output: `print(...)`, `sys.stdout.write` / `sys.stderr.write`, `sys.exit(...)`,
  `warnings.warn(...)`, `click.echo` / `click.secho`, `tqdm.write`, a parser's `.error(...)`;
- command-line help: the keywords `help=`, `description=`, `epilog=`, `usage=` of any call
  (argparse, click, and also a forge call's `description=`, which people read on GitHub);
- exceptions: the expression after `raise`, and any call of a name ending in `Error` or
  `Exception` (an exception built to be raised later, such as localhub's `ApiError(...)`);
- HTTP answers: the arguments of `abort`, `jsonify`, `make_response`, `Response`;
- returned text: the value of a `return` (the error text a validation function hands its
  caller, a summary a function builds for someone to read), but not the arguments of a call it
  returns (`return db.execute("...")`, `return render("...")`);
- text constants: a module-level or class-level assignment of a sentence to a name, alone or in
  a tuple, list, set or dict display (a text defined away from its home, whoever ends up saying
  it); not the argument of a call there either (`re.compile("...")` is a pattern).

Not counted, on purpose: docstrings and comments (for the people who read the code); logging
(`log.info(...)`, `logger.warning(...)`, `logging.*`: its lines are for operators, who read
them with the code at hand and grep for their wording, and they stay beside the code that logs
them); `assert` messages (for developers, and gone under -O); a literal on a line marked
`# not said` (another program's words matched against its output, a protocol's marker, a
stable code: text that must stay where it is matched, and says why beside it); a literal bound
to a local variable and passed on later (not followed: the detector reads one expression at a
time). The tests below pin both lists with small snippets, so the detector cannot silently pass.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("bot", "webhooks", "localhub")
HOMES = ("localhub/messages.py",)

_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)*")
_CODE = (" = ", "==")
_STRIP = ".,;:!?()[]\"'`"
_FIELD = re.compile(r"\{[^{}]*\}")
_PLACEHOLDER = "\x00"
_OUTPUT_CALLS = {"print", "sys.stdout.write", "sys.stderr.write", "sys.exit", "warnings.warn", "click.echo",
                 "click.secho", "tqdm.write", "abort", "jsonify", "make_response", "Response", "flask.abort",
                 "flask.jsonify", "flask.make_response", "flask.Response"}
_HELP_KEYWORDS = {"help", "description", "epilog", "usage"}
_LOGGERS = {"log", "logger", "logging", "_log", "_logger", "LOG", "LOGGER"}


def reads_as_sentence(text: str) -> bool:
    """Three words in a row on one line, in a text that is not code (see the module's docstring)."""
    if any(mark in text for mark in _CODE):
        return False
    for line in _FIELD.sub(_PLACEHOLDER, text).splitlines():
        run = 0
        for token in line.split():
            word = token.strip(_STRIP)
            if _WORD.fullmatch(word) and not (len(word) > 1 and word.isupper()):
                run += 1
                if run >= 3:
                    return True
            else:
                run = 0
    return False


def _text_of(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(part.value if isinstance(part, ast.Constant) else f" {_PLACEHOLDER} " for part in node.values)
    return None


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _is_logging(call: ast.Call) -> bool:
    name = _dotted(call.func)
    return "." in name and name.split(".")[-2] in _LOGGERS


def _literals(node: ast.AST, *, through_calls: bool = True) -> Iterator[tuple[int, str]]:
    """The texts written as literals anywhere inside an expression (an f-string once, whole),
    but not those compared (`x in ("...")`: matched, not said) nor those logged; with
    `through_calls` false, not the arguments of a call either (only what it is called on)."""
    if isinstance(node, ast.Compare) or (isinstance(node, ast.Call) and _is_logging(node)):
        return
    text = _text_of(node)
    if text is not None:
        yield node.lineno, text
        return
    if isinstance(node, ast.Call) and not through_calls:
        yield from _literals(node.func, through_calls=False)
        return
    for child in ast.iter_child_nodes(node):
        yield from _literals(child, through_calls=through_calls)


def _sinks(tree: ast.Module) -> Iterator[tuple[str, ast.AST]]:
    """(what kind of sink, the expression given to it) for every sink in a module."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            yield "raise", node.exc
        elif isinstance(node, ast.Return) and node.value is not None:
            yield "return", node.value
        elif isinstance(node, ast.Call) and not _is_logging(node):
            name = _dotted(node.func)
            last = name.rsplit(".", 1)[-1]
            if name in _OUTPUT_CALLS or (last == "error" and "parser" in name.lower()):
                yield name, node
            elif last.endswith(("Error", "Exception")):
                yield "exception", node
            for keyword in node.keywords:
                if keyword.arg in _HELP_KEYWORDS:
                    yield f"{keyword.arg}=", keyword.value
    for scope in [tree, *(node for node in ast.walk(tree) if isinstance(node, ast.ClassDef))]:
        for statement in scope.body:
            value = statement.value if isinstance(statement, ast.Assign | ast.AnnAssign) else None
            if value is not None:
                yield "constant", value


NOT_SAID = "# not said"


def strays(source: str) -> list[tuple[int, str, str]]:
    """(line, sink, text) for every sentence written as a literal where it is said, in order."""
    found: dict[tuple[int, str], str] = {}
    lines = source.splitlines()
    for kind, expression in _sinks(ast.parse(source)):
        for line, text in _literals(expression, through_calls=kind not in ("return", "constant")):
            if reads_as_sentence(text) and NOT_SAID not in lines[line - 1]:
                found.setdefault((line, text), kind)
    return sorted((line, kind, text) for (line, text), kind in found.items())


def is_home(relative: str) -> bool:
    return relative in HOMES or relative.endswith("/texts.py") or relative == "texts.py"


def package_of(relative: str) -> str:
    """The package folder a module is counted under: bot/<sub>/... under bot/<sub>, bot/x.py
    under bot, and webhooks/ and localhub/ whole."""
    parts = relative.split("/")
    return "/".join(parts[:2]) if parts[0] == "bot" and len(parts) > 2 else parts[0]


def packages() -> list[str]:
    return sorted({package_of(str(path.relative_to(ROOT))) for top in PRODUCT for path in (ROOT / top).rglob("*.py")})


def strays_in(package: str) -> list[str]:
    found = []
    for top in PRODUCT:
        for path in sorted((ROOT / top).rglob("*.py")):
            relative = str(path.relative_to(ROOT))
            if package_of(relative) != package or is_home(relative):
                continue
            for line, kind, text in strays(path.read_text(encoding="utf-8")):
                found.append(f"{relative}:{line}: {kind}: {text!r}")
    return found


# ----------------------------------------------------------------- the detector itself
@pytest.mark.parametrize("text", [
    "the answer is empty",
    "Memory is valid.",
    "cannot read {path}: the file is not UTF-8",
    "the LLM endpoint {url} did not answer within {seconds:g}s",
    "(expected summary and calls)",
    "localhub's own endpoints",
    "a read-only file stays as it is",
])
def test_these_read_as_sentences(text: str) -> None:
    assert reads_as_sentence(text)


@pytest.mark.parametrize("text", [
    "",
    "Not Found",
    "Bad credentials",
    "memrepo/validate",
    "--repo DIR",
    "{path}: {problem}",
    "application/json; charset=utf-8",
    "refs/heads/main refs/heads/dev HEAD~1",
    "%(asctime)s %(levelname)s %(message)s",
    "x-github-event",
    "{a} {b} {c}",
    "a_b c_d e_f",
    "a read-only file",
    "SELECT * FROM users WHERE id = ?",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY)",
    "local last = redis.call('GET', KEYS[1])\nif last and not seen then return 1 end",
    "event: head\nid: {sha}\ndata: {json}\n\n",
    "default-src 'none'; script-src 'self'; style-src 'self'",
])
def test_these_do_not(text: str) -> None:
    assert not reads_as_sentence(text)


FLAGGED = [
    ('print("the memory is clean now")', "print"),
    ('print(f"pushed {n} commits to the forge")', "print"),
    ('import sys\nsys.stderr.write("the server stopped at once\\n")', "sys.stderr.write"),
    ('import sys\nsys.exit("no memory found here")', "sys.exit"),
    ('import warnings\nwarnings.warn("this option is going away")', "warnings.warn"),
    ('p.add_argument("--repo", help="the memory clone to use")', "help="),
    ('argparse.ArgumentParser(description="Serve the memory over MCP.")', "description="),
    ('sub.add_parser("x", epilog="exit codes are listed below")', "epilog="),
    ('def f():\n    raise ValueError("the value is not allowed")', "raise"),
    ('def f(x):\n    raise MemrepoError("cannot read " + x + " as a memory file")', "raise"),
    ('def f(x):\n    raise _invalid(f"unknown keys {x} (expected summary and calls)")', "raise"),
    ('def f(x):\n    raise MemrepoError("the {} is not a memory".format(x))', "raise"),
    ('def f():\n    return ApiError(400, "Problems parsing the body")', "exception"),
    ('def f():\n    return "the {} is not a memory".format(name)', "return"),
    ('KINDS = {int: "a whole number", str: "ab"}', "constant"),
    ('err = ApiError(409, "Reference already exists")', "exception"),
    ('def f():\n    error = GitHubError(422, "Reference does not exist")\n    raise error', "exception"),
    ('def view():\n    abort(403, "you may not see this")', "abort"),
    ('def view():\n    x = jsonify({"message": "Must have admin rights"})', "jsonify"),
    ('def view():\n    x = Response("the body is too large", status=413)', "Response"),
    ('def check(v):\n    if not v:\n        return "a name must not be empty"\n    return None', "return"),
    ('def check(v):\n    return False, f"{v} is not a valid name"', "return"),
    ('NOTE = "Every edit is one commit."', "constant"),
    ('class K:\n    HINT: str = "pass --repo to name the memory"', "constant"),
    ('args.parser.error("give a query to search for")', "args.parser.error"),
]


@pytest.mark.parametrize(("source", "kind"), FLAGGED)
def test_the_detector_flags_a_sentence_said_in_place(source: str, kind: str) -> None:
    found = strays(source)
    assert len(found) == 1, found
    assert found[0][1] == kind


NOT_FLAGGED = [
    '"""A module docstring that reads as a sentence."""',
    'def f():\n    """A function docstring that reads as one too."""\n    return 1',
    '# a comment that is a sentence\nx = 1',
    'log.info("the receiver is listening on %s", url)',
    'logger.warning("a delivery was seen twice")',
    'logging.getLogger("memrepo").error("the worker stopped for good")',
    'def f():\n    log.exception("the tool failed in a way nobody expected")\n    raise',
    'assert x, "the list must not be empty here"',
    'def f():\n    message = "a local text is not followed"\n    return message',
    'print(messages.VALIDATE_OK.format(count=1))',
    'def f(p):\n    raise MemrepoError(messages.NOT_MEMORY.format(path=p))',
    'def f():\n    raise ApiError(404, "Not Found")',
    'def f():\n    return jsonify({"message": "Bad credentials", "documentation_url": DOCS})',
    'def f():\n    return render("pr/dream.md.j2", title=t)',
    'def f():\n    return "refs/heads/" + name',
    'def f(q):\n    return db.execute("SELECT id FROM repos WHERE name = ?", (q,))',
    'subprocess.run(["git", "commit", "-m", "a commit message here"])',
    'def f():\n    x = {"key": "some value in a dict literal"}',
    'ToolSpec("memory_view", {"path": {"type": "string"}})',
    'p.add_argument("--repo", metavar="the memory clone")',
    'def f(text):\n    return text.endswith("please wait a few minutes")',
    'def f(text):\n    return "secondary rate limit" in text or "abuse detection" in text',
    'if message in ("cannot lock ref", "failed to update ref"):\n    pass',
    'PATTERN = re.compile(r"Merge pull request #[0-9]+ from the branch")',
    'STOP = frozenset("a an the this that these those".split())',
    'LOCKED = ("cannot lock ref", "is at a different")  # not said: git\'s words, matched in its output',
]


@pytest.mark.parametrize("source", NOT_FLAGGED)
def test_the_detector_leaves_these_alone(source: str) -> None:
    assert strays(source) == []


def test_homes_are_not_read_and_everything_else_is() -> None:
    assert is_home("bot/texts.py") and is_home("bot/notify/texts.py") and is_home("localhub/messages.py")
    assert is_home("bot/memfs/format/texts.py")
    assert not is_home("bot/mcp/server.py") and not is_home("bot/memfs/messages.py")
    assert package_of("bot/dream/strategies/llm.py") == "bot/dream"
    assert package_of("bot/cli.py") == "bot" and package_of("webhooks/intake/github.py") == "webhooks"


def test_every_package_of_the_tree_is_checked() -> None:
    assert {"bot", "bot/mcp", "bot/memfs", "localhub", "webhooks"} <= set(packages())


# ----------------------------------------------------------------- the whole tree
@pytest.mark.parametrize("package", packages())
def test_no_sentence_is_said_outside_its_home(package: str) -> None:
    assert strays_in(package) == []


if __name__ == "__main__":  # a report of every package's strays: python -m tests.test_texts_homes
    for name in packages():
        found = strays_in(name)
        print(f"{name}: {len(found)}")
        for line in found:
            print("   ", textwrap.shorten(line, 160))
