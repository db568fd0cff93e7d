"""Agent transcripts: append-only JSON Lines logs per agent and conversation, and a BM25
search index (SQLite FTS5) beside them that works for English, Korean, Japanese and Chinese.

    store = TranscriptStore()                       # $MEMREPO_HOME or the user's data folder
    store.append("ada", "c1", "user", "회사에서 메모리를 샀어요")
    store.read("ada", "c1", after=cursor)           # the dreamer reads since its cursor
    store.search("메모리", agent="ada", k=5)        # -> [Hit(message fields, score, snippet)]
"""

from bot.transcript.log import TranscriptWarning
from bot.transcript.model import KINDS, Message, MessageNotFoundError
from bot.transcript.store import Hit, ImportReport, TranscriptStore

__all__ = ["KINDS", "Hit", "ImportReport", "Message", "MessageNotFoundError", "TranscriptStore",
           "TranscriptWarning"]
