"""The one exception type a user may see; everything else is a bug."""

from __future__ import annotations


class MemrepoError(Exception):
    """An error with a message a person (or an agent) can act on.

    `details` carries structured data for callers that want it (the current content of a
    file after a revision conflict, the problems of a failed validation, ...).
    """

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def __str__(self) -> str:
        return self.message
