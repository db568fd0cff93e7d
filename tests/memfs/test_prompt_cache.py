"""PromptCompiler on real git repositories, and `memrepo compile`."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest

from bot import cli
from bot.errors import MemrepoError
from bot.memfs.prompt import compiler as prompt
from bot.memfs.prompt.compiler import PromptCompiler
from bot.memfs.store.repo import MemoryRepo
from tests.conftest import git

PERSONA = "---\ndescription: Who I am\n---\nI am Ada, a careful assistant.\n"
HUMAN = "---\ndescription: The person I work with\n---\nPat prefers short answers.\n"


def commit(root: Path, files: dict[str, str], message: str = "change") -> str:
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit(root, {"system/persona.md": PERSONA, "system/human.md": HUMAN, ".memrepo/config.yml": ""},
           "start memory")
    return root


def test_hit_returns_identical_text(repo: Path) -> None:
    compiler = PromptCompiler(repo)
    first = compiler.compile("You are Ada.")
    second = compiler.compile("You are Ada.")
    assert not first.cache_hit and second.cache_hit
    assert second.text == first.text
    assert first.head_sha == second.head_sha == git(repo, "rev-parse", "HEAD").strip()
    assert first.text.startswith("You are Ada.\n\n<memory>\n<human>\n")
    assert "I am Ada, a careful assistant." in first.text


def test_hit_starts_no_process_and_opens_no_repository(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    compiler = PromptCompiler(repo)
    compiler.compile()

    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("a cache hit must not do this")

    monkeypatch.setattr(subprocess.Popen, "__init__", forbidden)
    monkeypatch.setattr(pygit2, "Repository", forbidden)
    monkeypatch.setattr(MemoryRepo, "open", forbidden)
    assert compiler.compile().cache_hit


def test_new_commit_invalidates(repo: Path) -> None:
    compiler = PromptCompiler(repo)
    before = compiler.compile()
    sha = commit(repo, {"system/human.md": HUMAN.replace("short", "detailed")})
    after = compiler.compile()
    assert not after.cache_hit
    assert after.head_sha == sha != before.head_sha
    assert "Pat prefers detailed answers." in after.text
    assert "short answers" not in after.text


def test_packed_refs(repo: Path) -> None:
    compiler = PromptCompiler(repo)
    compiler.compile()
    git(repo, "pack-refs", "--all")
    assert not (repo / ".git/refs/heads/main").exists()
    assert compiler.compile().cache_hit  # HEAD found in packed-refs: still the same commit

    sha = commit(repo, {"reference/notes.md": "---\ndescription: loose notes\n---\nx\n"})
    git(repo, "pack-refs", "--all")  # the new commit is known only from packed-refs
    assert not (repo / ".git/refs/heads/main").exists()
    after = compiler.compile()
    assert not after.cache_hit and after.head_sha == sha
    assert "└── notes.md — loose notes" in after.text


def test_other_system_prompt_invalidates(repo: Path) -> None:
    compiler = PromptCompiler(repo)
    one = compiler.compile("one")
    two = compiler.compile("two")
    assert not two.cache_hit
    assert two.text == "two" + one.text[len("one"):]
    assert compiler.compile("two").cache_hit


def test_working_tree_edits_do_not_appear(repo: Path) -> None:
    compiler = PromptCompiler(repo)
    committed = compiler.compile().text
    (repo / "system/persona.md").write_text(PERSONA.replace("careful", "reckless"))
    git(repo, "add", "system/persona.md")  # staged but not committed
    (repo / "system/draft.md").write_text("---\ndescription: draft\n---\nnot committed\n")
    (repo / "reference").mkdir()
    (repo / "reference/new.md").write_text("---\ndescription: untracked\n---\n")
    assert compiler.compile().text == committed
    assert PromptCompiler(repo).compile().text == committed  # nor on a cold compile
    assert "reckless" not in committed and "draft" not in committed and "untracked" not in committed


def test_recompile_parses_only_changed_blobs(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commit(repo, {f"reference/n{i}.md": f"---\ndescription: note {i}\n---\n" for i in range(5)})
    compiler = PromptCompiler(repo)
    compiler.compile()
    parsed: list[bytes] = []
    real = prompt.read_document

    def counting(data: bytes) -> object:
        parsed.append(data)
        return real(data)

    monkeypatch.setattr(prompt, "read_document", counting)
    commit(repo, {"reference/n3.md": "---\ndescription: note three\n---\n"})
    text = compiler.compile().text
    assert parsed == [b"---\ndescription: note three\n---\n"]
    assert "n3.md — note three" in text

    parsed.clear()
    PromptCompiler(repo).compile()  # a fresh compiler starts cold
    assert len(parsed) == 7  # two core files and five notes; the policy is not a document


def test_limits_come_from_the_committed_policy(repo: Path) -> None:
    commit(repo, {
        ".memrepo/config.yml": "limits:\n  tree_children: 1\n",
        "reference/a.md": "---\ndescription: a\n---\n",
        "reference/b.md": "---\ndescription: b\n---\n",
    })
    text = PromptCompiler(repo).compile().text
    assert "[Tree truncated: showing 2 of 3 entries. 1 omitted.]" in text
    commit(repo, {".memrepo/config.yml": "limits: [not, a, mapping]\n"})
    assert "Tree truncated" not in PromptCompiler(repo).compile().text  # defaults, memory kept


def test_files_left_out_of_the_tree_are_not_read(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commit(repo, {
        ".memrepo/config.yml": "limits:\n  tree_lines: 3\n",
        **{f"reference/n{i}.md": f"---\ndescription: note {i}\n---\n" for i in range(5)},
    })
    parsed: list[bytes] = []
    real = prompt.read_document
    monkeypatch.setattr(prompt, "read_document", lambda data: parsed.append(data) or real(data))
    text = PromptCompiler(repo).compile().text
    assert "[Tree truncated: showing 1 of 6 entries. 5 omitted.]" in text
    # The lines are made one ahead of the budget check, so at most the next note is read too.
    assert not [data for data in parsed if any(f"note {i}".encode() in data for i in (2, 3, 4))]


def test_missing_repository_is_a_memrepo_error(tmp_path: Path) -> None:
    with pytest.raises(MemrepoError, match="no memory repository"):
        PromptCompiler(tmp_path / "nowhere").compile()


# ------------------------------------------------------------------ the command
def test_cli_prints_the_prompt(repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["compile", "--repo", str(repo)]) == 0
    out = capsys.readouterr().out
    assert out == PromptCompiler(repo).compile().text + "\n"
    assert out.startswith("<memory>\n")

    system = tmp_path / "system.txt"
    system.write_text("You are Ada.\n")
    assert cli.main(["compile", "--repo", str(repo), "--system-prompt", str(system),
                     "--memory-dir", "/mem"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("You are Ada.\n\n<memory>\n")
    assert "<projection>/mem/system/persona.md</projection>" in out


@pytest.mark.parametrize("case", ["missing-repo", "not-memory", "missing-system-prompt"])
def test_cli_errors_are_one_line(case: str, repo: Path, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    if case == "missing-repo":
        argv = ["compile", "--repo", str(tmp_path / "nowhere")]
    elif case == "not-memory":
        plain = tmp_path / "plain"
        plain.mkdir()
        git(plain, "init", "-q", "-b", "main")
        commit(plain, {"README.md": "hi\n"})
        argv = ["compile", "--repo", str(plain)]
    else:
        argv = ["compile", "--repo", str(repo), "--system-prompt", str(tmp_path / "absent.txt")]
    assert cli.main(argv) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("memrepo: ")
    assert captured.err.count("\n") == 1
    assert "Traceback" not in captured.err
    if case == "missing-system-prompt":
        assert "cannot read the system prompt file" in captured.err
