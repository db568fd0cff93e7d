"""Properties of the memory tool over random sequences of calls: memory always validates,
history has exactly one commit per accepted call, and refusals change nothing."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.config import DEFAULT_POLICY
from bot.memfs.create import init_repository
from bot.memfs.format import validate
from bot.memfs.tool.memory_tool import MemoryTool
from tests.conftest import git

PATHS = st.sampled_from([
    "system/human.md", "system/persona.md", "system/notes.md", "system/team/people.md",
    "reference/a.md", "reference/deep/b.md", "skills/x/SKILL.md", "skills/flat.md",
    "system/a/b/c/too-deep.md", "../escape.md", ".memrepo/config.yml", "notes",
])
TEXT = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40),
    st.sampled_from(["---", "---\ndescription: d\n---\n", "- fact\n", "x" * 21000, "a\0b", "é✓ 메모리"]),
)
LINES = st.integers(min_value=-2, max_value=8)


def calls() -> st.SearchStrategy[dict]:
    return st.one_of(
        st.builds(lambda p, t, d: {"command": "create", "path": p, "file_text": t, **({"description": d} if d else {})},
                  PATHS, TEXT, st.one_of(st.none(), TEXT)),
        st.builds(lambda p, o, n: {"command": "str_replace", "path": p, "old_str": o, "new_str": n},
                  PATHS, st.sampled_from(["Nothing recorded yet.", "fact", "---", "I am", "x"]), TEXT),
        st.builds(lambda p, n, t: {"command": "insert", "path": p, "insert_line": n, "insert_text": t},
                  PATHS, LINES, TEXT),
        st.builds(lambda p: {"command": "delete", "path": p}, PATHS),
        st.builds(lambda a, b: {"command": "rename", "old_path": a, "new_path": b}, PATHS, PATHS),
        st.builds(lambda p, d: {"command": "update_description", "path": p, "description": d}, PATHS, TEXT),
        st.builds(lambda c: {"command": "core_memory_append", "label": "human", "content": c}, TEXT),
        st.builds(lambda p: {"command": "view", "path": p}, PATHS),
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(calls(), min_size=1, max_size=12))
def test_any_sequence_of_calls_keeps_memory_valid_and_one_commit_per_accepted_write(seq: list[dict]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = init_repository(Path(tmp) / "memory", "p1")
        tool = MemoryTool(repo)
        accepted_writes = 0
        for call in seq:
            head = repo.head_sha()
            result = tool.call(call)
            if result.ok and call["command"] != "view":
                accepted_writes += 1
                assert repo.head_sha() == result.commit != head
            else:
                assert repo.head_sha() == head, result.message
            assert git(repo.root, "status", "--porcelain") == "", call
        assert int(git(repo.root, "rev-list", "--count", "HEAD")) == 1 + accepted_writes
        files = repo.files("HEAD")
        for path, data in files.items():
            assert validate.validate_file(path, data, None, DEFAULT_POLICY) == [], path
        assert validate.core_size(files) <= DEFAULT_POLICY.limits.core_chars
        authors = set(git(repo.root, "log", "--format=%ae", "HEAD~" + str(accepted_writes) + "..HEAD").split()) \
            if accepted_writes else set()
        assert authors <= {"p1@agents.memrepo"}
