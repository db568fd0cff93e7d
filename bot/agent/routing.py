"""Where one memory edit of the agent goes: straight to `main`, or to a pull request (pure).

An edit becomes a pull request, never a direct commit, when any of these holds:
- it changes more lines than the policy's `direct_commit.max_changed_lines` (a large rewrite
  deserves a diff a person or the integrator looks at before it is the truth);
- it touches a path the policy's `protected` globs match (those always need a review);
- the turn it was made in saw content from an `external:` source (a web page, an e-mail, a
  fetched document): such content may carry instructions aimed at the agent, so the edit
  is labelled `memrepo:untrusted` and waits for a person's approval;
- it changes a rule file (`.memrepo/config.yml`, `.memfs.config.json`): the memory tool
  refuses those, but a harness committing with git can write them, and a change to the rules
  is a person's decision whatever the rules say.

The same decision routes a commit a harness made in the folder (`commit_facts`, used by
`memrepo follow`): its `Source` trailers are the turn's outside content.

"Changed lines" counts like `git diff --numstat`: lines added plus lines removed, over every
file the edit changes; a file moved without a change in its content counts nothing.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from bot.config import Policy, protected_paths, rule_files
from bot.contracts import LABEL_AGENT_EDIT, LABEL_UNTRUSTED
from bot.trailers import external_sources as trailer_sources
from bot.trailers import is_external

# Where an edit goes (routing.py) and what the agent is told about it.
AGENT_ROUTE_UNTRUSTED = "the turn included content from outside the conversation ({sources})"
AGENT_ROUTE_SHARED = "it changes shared memory {name}, which is attached to other agents too and changes only " \
    "through the pull requests its team reviews"
AGENT_ROUTE_RULES = "it changes the rules memory is judged by ({paths}), which only a person may change"
AGENT_ROUTE_TOO_LARGE = "it changes {lines} lines, more than the {limit} a direct commit may change " \
                        "(direct_commit.max_changed_lines)"

EXTERNAL_PREFIX = "external:"

Changes = Mapping[str, tuple[bytes | None, bytes | None]]  # path -> (before, after); None: absent


@dataclass(frozen=True)
class EditFacts:
    """What the decision needs to know of one edit, as plain data."""

    paths: tuple[str, ...]
    changed_lines: int
    external_sources: tuple[str, ...] = ()
    empties_core: bool = False  # it deletes the last file of system/


@dataclass(frozen=True)
class Route:
    """The decision: `direct` (commit and push to main) or a pull request with `labels`."""

    direct: bool
    labels: tuple[str, ...] = ()
    too_large: bool = False
    max_changed_lines: int = 0
    changed_lines: int = 0
    protected: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    empties_core: bool = False
    conflict: str = ""  # a queued edit that could not be replayed onto main: why
    rules: tuple[str, ...] = ()  # the rule files it changes
    shared: str = ""  # the shared memory it changes (bot/agent/shared.py): always a pull request there

    @property
    def untrusted(self) -> bool:
        return bool(self.sources)

    @property
    def reasons(self) -> tuple[str, ...]:
        """Why the edit is a pull request, one phrase per reason, for the agent and reviewers."""
        out = []
        if self.shared:
            out.append(AGENT_ROUTE_SHARED.format(name=self.shared))
        if self.sources:
            out.append(AGENT_ROUTE_UNTRUSTED.format(sources=", ".join(self.sources)))
        if self.rules:
            out.append(AGENT_ROUTE_RULES.format(paths=", ".join(self.rules)))
        if self.protected:
            out.append("it touches protected memory: {paths}".format(paths=", ".join(self.protected)))
        if self.empties_core:
            out.append("it deletes the last file of core memory (system/), which would leave the agent with none")
        if self.conflict:
            out.append(f"it could not be replayed onto main, which had moved: {self.conflict}")
        if self.too_large:
            out.append(AGENT_ROUTE_TOO_LARGE.format(lines=self.changed_lines,
                                                          limit=self.max_changed_lines))
        return tuple(out)


def route_edit(facts: EditFacts, policy: Policy) -> Route:
    """Direct commit or pull request for one edit under `policy` (see the module docstring)."""
    limit = policy.direct_commit.max_changed_lines
    too_large = facts.changed_lines > limit
    protected = tuple(protected_paths(facts.paths, policy.protected))
    sources = external_sources(facts.external_sources)
    rules = tuple(rule_files(facts.paths))
    if not (too_large or protected or sources or facts.empties_core or rules):
        return Route(True, max_changed_lines=limit, changed_lines=facts.changed_lines)
    labels = (LABEL_AGENT_EDIT, LABEL_UNTRUSTED) if sources else (LABEL_AGENT_EDIT,)
    return Route(False, labels, too_large, limit, facts.changed_lines, protected, sources, facts.empties_core,
                 rules=rules)


def combined(routes: Iterable[Route]) -> Route:
    """One pull request's route for several held commits: every reason any of them has."""
    routes = tuple(routes)

    def union(values: Iterable[tuple[str, ...]]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(v for value in values for v in value))

    lines = sum(r.changed_lines for r in routes)
    limit = max((r.max_changed_lines for r in routes), default=0)
    sources = union(r.sources for r in routes)
    return Route(False, (LABEL_AGENT_EDIT, LABEL_UNTRUSTED) if sources else (LABEL_AGENT_EDIT,),
                 any(r.too_large for r in routes), limit, lines, union(r.protected for r in routes), sources,
                 any(r.empties_core for r in routes), rules=union(r.rules for r in routes))


def external_sources(sources: Iterable[str]) -> tuple[str, ...]:
    """The `external:` sources among `sources` (the prefix in any letter case, as the integrator
    reads `Source` trailers), each once, in the order first seen."""
    return tuple(dict.fromkeys(s for s in sources if is_external(s)))


def commit_facts(changes: Changes, message: str, empties_core: bool = False) -> EditFacts:
    """What the decision needs to know of a commit a harness made: the paths and lines it
    changes, and the outside sources its `Source` trailers name (a harness that records none
    is judged on its paths and size alone: nothing else about its turn can be known from the
    commit)."""
    return EditFacts(tuple(sorted(changes)), changed_lines(changes), trailer_sources([message]), empties_core)


def _lines(data: bytes | None) -> list[str]:
    return [] if data is None else data.decode("utf-8", "replace").splitlines()


def changed_lines(changes: Changes) -> int:
    """Lines added plus lines removed by `changes` (path -> (before, after), None: absent).
    A deleted file whose exact content reappears under a new path is a move: it counts 0."""
    deleted = [p for p, (before, after) in changes.items() if before is not None and after is None]
    created = [p for p, (before, after) in changes.items() if before is None and after is not None]
    moved: set[str] = set()
    for old in deleted:
        twin = next((new for new in created if new not in moved and changes[new][1] == changes[old][0]), None)
        if twin is not None:
            moved.update((old, twin))
    total = 0
    for path, (before, after) in changes.items():
        if path in moved:
            continue
        matcher = difflib.SequenceMatcher(None, _lines(before), _lines(after), autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "equal":
                total += (i2 - i1) + (j2 - j1)
    return total
