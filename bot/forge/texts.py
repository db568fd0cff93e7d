"""What the GitHub client says: how GitHub answered, the operation it was asked for (each
error names it), and a merge's outcome, which says whether it may have happened."""

from __future__ import annotations

FORGE_CONFLICT = "{operation}: conflict (GitHub answered {answer}); re-read the current state and decide again"

