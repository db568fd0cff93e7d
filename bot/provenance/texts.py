"""What `why` says when a link of its chain is missing or was not asked for: a line the file
lacks, a forge not asked or unreachable, a provenance block unreadable, a transcript absent.
Each says what is shown instead, so a partial answer is never taken for a whole one."""

from __future__ import annotations

from bot.texts import Text

HISTORY_WHERE_MAIN = "at {ref} ({sha})"
HISTORY_NO_SUCH_LINE = Text("{path} has {count:|line|lines} {where}; there is no line {line}")
HISTORY_NO_LINES = "{path} is empty {where}; there is no line {line}"
HISTORY_FORGE_DISABLED = "the forge was not asked (--no-forge)"
HISTORY_FORGE_NO_REMOTE = "the forge was not asked: memory has no remote"
HISTORY_FORGE_NOT_FORGE = "the forge was not asked: origin ({url}) is not a GitHub-style repository URL"
HISTORY_FORGE_NO_TOKEN = "the forge was not asked: no token for {repository} (set MEMREPO_FORGE_TOKEN or GITHUB_TOKEN)"
HISTORY_FORGE_NOT_NEEDED = "the forge was not asked: no line came through a merge"
HISTORY_FORGE_FAILED = "the forge could not be asked ({problem}); what git records is shown"
HISTORY_FORGE_UNREACHABLE = ("the forge of {repository} could not be reached (check that it is running and that "
                             "origin names it); what git records is shown")
HISTORY_PROVENANCE_UNREADABLE = "the pull request's provenance block cannot be read ({problem}); the commit's " \
                                "trailers are shown"
HISTORY_PROVENANCE_ABSENT = "the pull request's description has no provenance block; the commit's trailers are shown"
HISTORY_PROVENANCE_OTHER = "the pull request's provenance is for dream {dream}, not this commit's; the commit's " \
                           "trailers are shown"
HISTORY_TRANSCRIPTS_DISABLED = ("transcripts were not read here (--no-transcripts, or a palace served by the "
                                "integrator, which holds none; `memrepo why` where the agent's transcripts are "
                                "quotes them)")
HISTORY_TRANSCRIPT_MISSING = "the transcript of conversation {conversation} (agent {agent}) is not available " \
                             "locally{where}: {problem}"
HISTORY_TRANSCRIPT_UNNAMED = "the dream does not name its agent and conversation"
