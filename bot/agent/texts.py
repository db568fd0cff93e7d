"""What an agent session says to the agent and its user: where an edit went and why (a commit,
or a pull request that must be reviewed), the slash commands' answers, the event stream's state
and /doctor's report. Each says what memory holds now, so the agent does not rely on an edit
that has not landed."""

from __future__ import annotations

AGENT_CONNECT_HINT = "Connect one with /memory-repository set <url>."





