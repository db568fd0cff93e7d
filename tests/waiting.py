"""Waiting for something another thread or process does: poll the real condition until it holds
or a deadline passes. Tests wait this way instead of sleeping a fixed time, so a slow machine
makes them slower, never wrong, and a condition that never comes fails with what was awaited."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

POLL_SECONDS = 0.02


def wait_until(predicate: Callable[[], T], timeout: float, message: str | Callable[[], str]) -> T:
    """`predicate()`'s first true value, polled every POLL_SECONDS. After `timeout` seconds without
    one, AssertionError naming `message` (a callable is asked then, so it can report the state the
    wait ended in)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            said = message() if callable(message) else message
            raise AssertionError(f"waited {timeout:g} s in vain for {said}")
        time.sleep(POLL_SECONDS)
