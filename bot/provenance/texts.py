"""What `why` says when a link of its chain is missing or was not asked for: a line the file
lacks, a forge not asked or unreachable, a provenance block unreadable, a transcript absent.
Each says what is shown instead, so a partial answer is never taken for a whole one."""

from __future__ import annotations

HISTORY_WHERE_MAIN = "at {ref} ({sha})"
