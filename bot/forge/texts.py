"""What more than one module of the GitHub client says: a conflict, named by the operation that
met it, from the error table (errors.py) and from the endpoints that meet one (client.py)."""

from __future__ import annotations

FORGE_CONFLICT = "{operation}: conflict (GitHub answered {answer}); re-read the current state and decide again"

