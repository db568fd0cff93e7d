"""What `memrepo demo` narrates: the stack it starts, each step of the team's story and each
check of a step, and how a step failed. Its command line help is bot/commands/texts.py's."""

from __future__ import annotations

# What the demo's agents are told they are, and the forge repository it makes.
DEMO_SYSTEM_PROMPT = "You are a helpful assistant with a long-term memory."
DEMO_REPO_DESCRIPTION = "Memory of the payments team's agents"

DEMO_STACK = """\
The embedded default is running (stopped again at the end):
   localhub REST  {api}
   receiver       {receiver}
   Redis          {redis}
   data           {data}
"""
DEMO_STEP = "\n{number}. {title}"
DEMO_CHECKED = "   [ok] {what}"
DEMO_QUOTED = "   | {line}"
DEMO_INDENTED = "   {text}"
DEMO_SAID = "   {who} says: \"{text}\""
DEMO_COMMAND = "   $ {command}"
DEMO_TOOL_RESULT = "   {agent}'s memory tool ({route}): {text}"
DEMO_DREAM_OUTCOME = "   /dream: {text}"
DEMO_PROMPT_AT = "   {agent}'s next prompt is compiled at {sha} (head moves seen: {moves})"
DEMO_HELD = "   (the integrator is held for a moment, so the person's edit lands while the dream is open)"
DEMO_PERSON_EDIT = "   Sam edits {path} on the forge (commit {sha}) while dream #{number} is open."
DEMO_APPROVED = "   Sam approves #{number} on the forge."
DEMO_REPOSITORY_SET = "   $ memrepo repository set {url} --repo {path}   # {agent}"
DEMO_STEP_CONNECT = "Two agents, Ada and Ben, connect a new memory to the forge with `memrepo repository set`."
DEMO_STEP_LEARN = "Ada learns who the user is and commits small edits straight to main."
DEMO_STEP_DREAM = "A dream consolidates the conversation into a pull request; the integrator merges it."
DEMO_STEP_CONFLICT = "A person edits memory on the forge while a second dream is open; the integrator resolves it."
DEMO_STEP_PROTECTED = "A change to a protected file waits for a person's review, then merges."
DEMO_STEP_WHY = "Where did a fact come from, and what did memory hold before the last change?"
DEMO_CHECK_CONNECTED = "the forge's {repo} and both clones are at {sha}"
DEMO_CHECK_HOOKED = "the forge delivers the repository's events to the integrator's receiver (its first push did it)"
DEMO_CHECK_FOLLOWING = "both agents follow the receiver's event stream"
DEMO_CHECK_DIRECT = "a small edit is committed straight to main and pushed"
DEMO_CHECK_ON_MAIN = "main on the forge is Ada's commit {sha}"
DEMO_CHECK_OTHER_AGENT = "{agent} was notified, synced, and its prompt shows the new fact"
DEMO_CHECK_DREAM_RAN = "the dream ran and opened a pull request"
DEMO_CHECK_PROVENANCE = "pull request #{number} records its provenance: agent, conversation, messages, base"
DEMO_CHECK_MERGED = "the integrator validated and merged #{number} as {sha}"
DEMO_CHECK_RECOMPILED = "both agents were notified and recompiled at {sha}"
DEMO_CHECK_BOTH_HOLD = "both agents' memory holds what the user said, in {path}"
DEMO_CHECK_CONFLICTS = "the forge says #{number} no longer merges as it is (a conflict with the person's edit)"
DEMO_CHECK_RESOLVED = "the integrator resolved the conflict of #{number} in the commit that merged it"
DEMO_CHECK_NOTHING_LOST = "main's {path} keeps the person's note and both dreams' records"
DEMO_CHECK_PROTECTED_PR = "an edit to {path} (protected) became a pull request instead of a commit on main"
DEMO_CHECK_WAITS = "#{number} waits, labelled {label}; main has not moved"
DEMO_CHECK_PROMPTS_SHOW = "both agents' prompts now say \"{text}\""
DEMO_CHECK_WHY_DREAM = "why: the line came from dream #{number}, with the user's own words from the transcript"
DEMO_CHECK_WHY_PERSON = "why: the person's line is a person's direct edit, and no conversation is invented"
DEMO_CHECK_OWN_TOKENS = ("each agent follows with its own forge token, the one its clone pushes with (the forge "
                         "knows them as {logins}), not an operator token")
DEMO_CHECK_OUTSIDER = "a forge token that may not read the private {repo} is refused its event stream (404)"
DEMO_CHECK_AT = "at: memory held the persona of {sha}, before the approved change"
DEMO_DONE = "\nEvery step did what it says ({seconds:.1f} s)."
DEMO_STEP_FAILED = "demo step failed: {what}"
DEMO_TIMED_OUT = "demo step failed: waited {seconds:.0f} s for {what}"
DEMO_TOO_SLOW = "demo: every step did what it says, but it took {seconds:.1f} s (the limit is {limit:.0f} s)"
DEMO_DIR_NOT_EMPTY = "demo: {path} is not an empty folder; give a new or empty one to --keep"
