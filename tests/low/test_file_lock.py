"""bot/file_lock.py: the one flock. Readers share it; a writer has it alone."""

from __future__ import annotations

from pathlib import Path

from bot.file_lock import file_lock


def test_readers_share_the_lock_and_a_writer_waits_for_them(tmp_path: Path) -> None:
    lock = tmp_path / "agent" / ".lock"
    with file_lock(lock, shared=True) as first:
        with file_lock(lock, shared=True, wait=False) as second:
            assert (first, second) == (True, True)
        with file_lock(lock, wait=False) as writer:
            assert writer is False
    with file_lock(lock, wait=False) as writer:
        assert writer is True


def test_a_writer_keeps_readers_and_writers_out(tmp_path: Path) -> None:
    lock = tmp_path / ".lock"
    with file_lock(lock) as held:
        assert held is True
        with file_lock(lock, shared=True, wait=False) as reader:
            assert reader is False
        with file_lock(lock, wait=True, timeout=0.05) as other:
            assert other is False
