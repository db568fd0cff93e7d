"""What sync says: connecting a remote, pushing, replaying, setting aside, and where a clone stands."""

from __future__ import annotations

from bot.texts import Text

# Sync and remotes.
SYNC_NO_REMOTE = "no remote"
SYNC_NOT_CONFIGURED = (
    "{path} is not connected to a remote; connect one with `memrepo repository set <url>`"
)
SYNC_DIRTY = (
    "tracked files have uncommitted changes ({paths}); commit or discard them before syncing"
)
SYNC_DIRTY_QUEUED = (
    "the remote's main moved, and replaying onto it would touch a working tree with "
    "uncommitted changes ({paths})"
)
SYNC_UNREACHABLE = "remote unreachable: {problem}"
SYNC_OTHER_LOCALHUB = (
    "the localhub at {base} refused this clone's token: it keeps its data in {data}, and a token is known only to "
    "the localhub whose data folder made it (two localhubs on one port, one after the other?); start the localhub "
    "whose data folder made the token, or make a new token on this one with `memrepo localhub create-repo {repo} "
    "--url {base} --data {data} --new-token` and connect the URL it prints"
)
SYNC_REFUSED = "the remote refused the push: {problem}"
SYNC_BUSY = "the remote's main kept moving ({attempts} attempts)"
SYNC_NOT_ON_MAIN = "the clone has {branch} checked out, not main; memrepo syncs main only"
SYNC_SET_ASIDE = (
    "Commit {sha} \"{message}\" was NOT saved to main: it could not be replayed onto the remote's main "
    "({reason}). It is kept at {ref}; apply it with `git cherry-pick {sha}` once resolved, or redo the edit, "
    "then delete the ref (`git update-ref -d {ref}`)."
)
SYNC_SET_ASIDE_NO_REASON = "no reason was recorded"
SYNC_CONFLICT_LINES = "{path} was changed differently on both sides ({where})"
SYNC_CONFLICT_DELETED = "{path} was deleted on one side and changed on the other"
SYNC_CONFLICT_ADDED = "{path} was added on both sides with different content"
SYNC_CONFLICT_NOT_TEXT = "{path} was changed on both sides and is not UTF-8 text, so it cannot be merged"
SYNC_CONFLICT_INVALID = "{path} does not validate once merged ({problem})"
SYNC_UP_TO_DATE = "in sync with {url} at {sha}"
SYNC_PUSHED = Text("pushed {count:|commit|commits} to {url}; main is at {sha}")
SYNC_PUSHED_REPLAYED = Text(
    "replayed {replayed:|local commit|local commits} onto the remote's newer main and pushed them to {url}; "
    "main is at {sha}"
)
SYNC_FAST_FORWARDED = Text("fast-forwarded main by {count:|commit|commits} from {url}; main is at {sha}")
REMOTE_URL_EMPTY = (
    "the remote URL is empty; give a git URL such as https://github.com/owner/memory.git or a path"
)
REMOTE_URL_BAD_CHARS = "the remote URL '{url}' contains whitespace or control characters"
REMOTE_URL_OPTION = "the remote URL '{url}' starts with '-'; give a git URL or a path"
REMOTE_SET_UNREACHABLE = "cannot reach {url} ({problem}); nothing was changed"
REMOTE_SET_NO_MAIN = (
    "{url} has branches ({branches}) but no main; memrepo syncs main only, so nothing was changed"
)
REMOTE_SET_UNRELATED = Text(
    "{url} and {path} have no commit in common ({count:|local commit|local commits}; the remote's main is at "
    "{remote}, local main at {local}), so neither can be replayed onto the other; nothing was changed. Connect "
    "an empty repository, or clone the remote and redo the local edits there"
)
REMOTE_SET_JOINED = Text(
    "connected to {url}: replayed {replayed:|local commit|local commits} onto the remote's main (which had "
    "{pulled:|commit|commits} this folder lacked) and pushed; main is at {sha}"
)
REMOTE_SET_JOINED_NOT_PUSHED = (
    "connected to {url} and replayed the local commits onto the remote's main, but could not push them "
    "({reason}); `memrepo repository sync --repo {path}` sends them"
)
REMOTE_SET_DIRTY = (
    "tracked files have uncommitted changes ({paths}); commit or discard them before taking the "
    "remote's history"
)
REMOTE_SET_PUSH_FAILED = "connected to {url} but could not push main ({reason}); nothing was changed"
REMOTE_SET_PUSHED = Text("connected to {url}: pushed main ({count:|commit|commits}) to the empty remote")
REMOTE_SET_ADOPTED = (
    "connected to {url}: took the remote's main ({sha}); the local initial commit is kept at {backup}"
)
REMOTE_SET_FAST_FORWARDED = Text("connected to {url}: fast-forwarded main by {count:|commit|commits} to {sha}")
REMOTE_SET_AHEAD = Text("connected to {url}: pushed {count:|local commit|local commits}; main is at {sha}")
REMOTE_SET_IN_SYNC = "connected to {url}: already in sync at {sha}"
REMOTE_UNSET = "disconnected from {url}"
REMOTE_UNSET_UNPUSHED = Text(
    "disconnected from {url}; the local history keeps its {count:|unpushed commit|unpushed commits}"
)
REMOTE_UNSET_NONE = "no remote was connected; nothing to do"
STATUS_REMOTE = "remote"
STATUS_HEAD = "head"
STATUS_AHEAD = "ahead"
STATUS_BEHIND = "behind"
STATUS_LAST_SYNC = "last sync"
STATUS_BACKUPS = "backups"
STATUS_SET_ASIDE = "Set aside"
STATUS_SET_ASIDE_VALUE = "{sha} \"{message}\" at {ref}: {reason}"
STATUS_NO_REMOTE = "none (connect one with `memrepo repository set <url>`)"
STATUS_NEVER = "never"
STATUS_NONE = "none"
STATUS_AHEAD_VALUE = Text("{count:|commit|commits} not pushed")
STATUS_BEHIND_VALUE = Text("{count:|commit|commits} not pulled (as of {when})")
STATUS_LAST_FETCH = "the last fetch"
STATUS_JUST_NOW = "this fetch"
STATUS_UNKNOWN = "unknown (never fetched)"
STATUS_FETCH_FAILED = "fetch failed: {problem}"
