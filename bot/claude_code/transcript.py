"""One Claude Code session's transcript, kept up to date in the transcript store, so that a
write names the turn that made it.

Claude Code starts memrepo's MCP server for each session with CLAUDE_CODE_SESSION_ID (and
CLAUDE_PROJECT_DIR) in its environment, and gives its hooks the session's `transcript_path`;
the SessionStart hook keeps that path beside what the session saw (bot/claude_code/hook.py).
Before each write, `catch_up` imports what the session file gained since the last look
(bot/transcript/claude_code_import.py) and feeds the rows the agent session has not seen yet
into its turn: the commit then carries the session as `Conversation-ID` and the turn's
messages as `Transcript-Range`, whatever route the write takes, and a turn that read untrusted
content routes its writes to a pull request as any agent's would.

A result of memrepo's own memory tools (`mcp__memrepo__memory_view`, `..._core_memory_append`,
...: `bot.config.OWN_MEMORY_TOOLS`, as Claude Code names the server `claude-code install` registers) is the memory
itself or memrepo's report of a write: it does not make the context untrusted, or every write
after a session's first would become a pull request. Its searches, `memory_why`, `memory_at`
and `memory_record` are not among them: they quote transcripts and past memory, which may hold
what came from outside.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from bot.claude_code import state
from bot.config import own_tool_sources
from bot.errors import MemrepoError
from bot.transcript.claude_code_import import CONFIG_ENV, SUFFIX, import_claude_code

if TYPE_CHECKING:
    from bot.agent import AgentSession
    from bot.transcript import TranscriptStore

TRANSCRIPT_NOT_A_SESSION = "did not import {path}: a Claude Code session file is an absolute path ending in .jsonl"
TRANSCRIPT_ELSEWHERE = ("did not import {path}: it is not in this session's project folder {folder} of Claude "
                        "Code's projects directory; to import it anyway, name its folder in {env}")

log = logging.getLogger("memrepo.claude_code")

SESSION_ENV = "CLAUDE_CODE_SESSION_ID"
CALL_WAIT_SECONDS = 2.0  # how long a write waits for Claude Code to write down the call that made it
CALL_POLL_SECONDS = 0.02
PROJECT_ENV = "CLAUDE_PROJECT_DIR"
FOLDER_NAME_ENV = "CLAUDE_CODE_PROJECT_DIR_NAME"  # Claude Code's own override of the folder's name
NAMED_ENV = "MEMREPO_CLAUDE_CODE_TRANSCRIPTS"  # folders (os.pathsep between) whose transcripts a user allows
_NAME_OVERRIDE = re.compile(r"[A-Za-z0-9_-]{1,64}")
_WINDOWS_DEVICE = re.compile(r"con|prn|aux|nul|com[0-9]|lpt[0-9]", re.IGNORECASE)
SLUG_MAX = 200  # Claude Code cuts a longer folder name here and adds a hash of the whole path
# memrepo's MCP tools whose result holds nothing from outside (bot/mcp/catalog.py MEMORY_TOOLS):
# a view of the memory, and memrepo's own report of an edit.
def _js_units(text: str) -> list[int]:
    """`text` as JavaScript sees it: UTF-16 code units (a character beyond U+FFFF is two)."""
    data = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(data[i:i + 2], "little") for i in range(0, len(data), 2)]


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, digit = divmod(number, 36)
        out = digits[digit] + out
        if number == 0:
            return out


def project_folder_name(cwd: str) -> str:
    """The name Claude Code (2.1) gives the folder of a project's sessions in its projects
    directory: every UTF-16 code unit of the path outside [A-Za-z0-9] made `-`; a name longer
    than SLUG_MAX cut there, then `-` and the absolute value of the path's Java-style string
    hash (31 * h + unit, 32-bit) in base 36."""
    units = _js_units(cwd)
    slug = "".join(chr(u) if u < 128 and chr(u).isalnum() else "-" for u in units)
    if len(slug) <= SLUG_MAX:
        return slug
    hashed = 0
    for unit in units:
        hashed = (hashed * 31 + unit) & 0xFFFFFFFF
    signed = hashed - (1 << 32) if hashed >= 1 << 31 else hashed
    return f"{slug[:SLUG_MAX]}-{_base36(abs(signed))}"


def projects_dir(env: Mapping[str, str]) -> Path:
    """Claude Code's projects directory: $CLAUDE_CONFIG_DIR (else ~/.claude), NFC, /projects."""
    config = env.get(CONFIG_ENV) or str(Path.home() / ".claude")
    return Path(unicodedata.normalize("NFC", config)).expanduser() / "projects"


def project_folders(cwd: str, env: Mapping[str, str]) -> list[Path]:
    """The folders a session started in `cwd` (or in CLAUDE_PROJECT_DIR, the project's root)
    keeps its transcript in: its project's, by Claude Code's rule (CLAUDE_CODE_PROJECT_DIR_NAME
    names it instead when CLAUDE_CONFIG_DIR is set and the name is one Claude Code takes)."""
    base = projects_dir(env)
    override = env.get(FOLDER_NAME_ENV, "")
    if env.get(CONFIG_ENV) and _NAME_OVERRIDE.fullmatch(override) and not _WINDOWS_DEVICE.fullmatch(override):
        return [base / override]
    starts = [cwd, env.get(PROJECT_ENV, "")]
    return list(dict.fromkeys(base / project_folder_name(start) for start in starts if start))


def transcript_problem(transcript: str, cwd: object, env: Mapping[str, str]) -> str | None:
    """Why a hook may not import `transcript`, or None: it must be a session file (`.jsonl`)
    inside the session's own project folder (`project_folders`), or inside a folder the user
    names in MEMREPO_CLAUDE_CODE_TRANSCRIPTS; compared after links and `..` are resolved, so
    another project's sessions (and their secrets) never become searchable from this memory."""
    path = Path(transcript).expanduser()
    if not path.is_absolute() or path.suffix != SUFFIX:
        return TRANSCRIPT_NOT_A_SESSION.format(path=transcript)
    real = path.resolve()
    named = [Path(folder).expanduser() for folder in env.get(NAMED_ENV, "").split(os.pathsep) if folder.strip()]
    folders = (project_folders(cwd, env) if isinstance(cwd, str) and cwd else []) + named
    if any(real.is_relative_to(folder.resolve()) for folder in folders):
        return None
    where = ", ".join(str(folder) for folder in folders[:1]) or "(the hook input names no cwd)"
    return TRANSCRIPT_ELSEWHERE.format(path=transcript, folder=where, env=NAMED_ENV)


def session_id(env: Mapping[str, str]) -> str | None:
    """The session Claude Code started this process for, if it did."""
    return env.get(SESSION_ENV, "").strip() or None


def transcript_path(root: Path, session: str, env: Mapping[str, str]) -> Path | None:
    """The session's file: where the SessionStart hook said it is, else where Claude Code keeps
    it for the project (CLAUDE_PROJECT_DIR); None when neither is known or there."""
    told = state.seen_fact(state.state_file(root, session), "transcript")
    if told is not None:
        return Path(told)
    project = env.get(PROJECT_ENV)
    if not project:
        return None
    guess = project_folders(project, env)[0] / f"{session}{SUFFIX}"
    return guess if guess.is_file() else None


class SessionTranscript:
    """Keeps an agent session's turn in step with its Claude Code session's file."""

    harness = "Claude Code"

    def __init__(self, root: Path, session: str, env: Mapping[str, str]) -> None:
        self.root = root
        self.session = session
        self.env = env
        self.last: str | None = None  # the last row fed into the turn

    def path(self) -> Path | None:
        """The session's file, if it is known."""
        return transcript_path(self.root, self.session, self.env)

    def bring_in(self, store: TranscriptStore, agent_id: str, path: Path) -> None:
        """Import what the session's file gained into `store`."""
        import_claude_code(store, agent_id, path)

    def catch_up(self, agent: AgentSession, tool_use: str | None = None) -> None:
        """Import what is new and feed it into `agent`'s turn. `tool_use`: the id of the call
        being served; Claude Code writes the message holding it a moment after it starts the
        call, so the import waits for it (CALL_WAIT_SECONDS at most). A session file that
        cannot be found or read leaves the turn as it is (logged): the write still names the
        session."""
        path = self.path()
        if path is not None and tool_use:
            written_down(path, tool_use)
        if path is None or not path.is_file():
            log.warning("no transcript of %s session %s found; the write names the session only",
                        self.harness, self.session)
            return
        try:
            self.bring_in(agent.store, agent.agent_id, path)
            if self.session not in agent.store.conversations(agent.agent_id):
                return
            rows = agent.store.read(agent.agent_id, self.session, after=self.last)
        except MemrepoError as exc:
            log.warning("the transcript of %s session %s was not imported: %s", self.harness, self.session, exc)
            return
        if rows:
            agent.observe(rows, own_tool_sources())
            self.last = rows[-1].message_id


def written_down(path: Path, tool_use: str, wait: float = CALL_WAIT_SECONDS) -> bool:
    """Whether the session file holds the call `tool_use` (a whole line), waiting up to `wait`.
    The file itself may not be there yet: Claude Code writes a new session's file a moment
    after its first rows, so a first call can arrive before it."""
    needle = json.dumps(tool_use).encode()
    deadline = time.monotonic() + wait
    while True:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            data = b""
        except OSError:
            return False
        at = data.find(needle)
        if at >= 0 and data.find(b"\n", at) >= 0:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(CALL_POLL_SECONDS)
