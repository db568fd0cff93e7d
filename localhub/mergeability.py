"""Mergeability as GitHub reports it: `mergeable` is null after a pull request's head or
base moves and becomes true/false once a background job has tried the three-way merge;
`mergeable_state` adds branch protection, reviews and commit statuses to that.

Clients poll for `mergeable` because GitHub computes it lazily; localhub keeps that
contract so code written against it copes with GitHub. The merge is tried when the pull
request is first read after a change (that read still answers null) or, failing a read,
shortly after the change. Every result is written under the `mergeable_key` (head sha +
base sha) it was computed for, so a slow job never overwrites a newer state.

Branch protection is a localhub rule per branch (see rest_pulls' admin endpoint), kept as
JSON in `repos.protection`: `{"main": {"required_approving_review_count": 1,
"required_status_checks": ["ci"], "strict": true}}`.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import pygit2

from localhub import merging, messages
from localhub.hub import Hub
from localhub.store import now

log = logging.getLogger("localhub.mergeability")

# Seconds after a change before the merge is tried unprompted. A read starts it at once; the
# fallback is for pull requests nobody reads, and while main moves faster than this (a burst
# of merges) it is skipped for keys already outdated, so one merge does not cost a trial merge
# of every open pull request.
FALLBACK_DELAY = 5.0


DECISIVE_REVIEWS = ("APPROVED", "CHANGES_REQUESTED", "DISMISSED")
NOT_GREEN = ("failure", "error", "pending")


# ---------------------------------------------------------------------------- protection

def protection(repo: Any, branch: str) -> dict[str, Any] | None:
    """The protection rule of `branch`, or None when it is not protected."""
    raw = repo["protection"]
    if not raw:
        return None
    try:
        rules = json.loads(raw)
    except ValueError:
        return None
    rule = rules.get(branch) if isinstance(rules, dict) else None
    return rule if isinstance(rule, dict) else None


def set_protection(hub: Hub, repo_id: int, branch: str, rule: dict[str, Any] | None) -> None:
    with hub.store.tx() as db:
        row = db.execute("SELECT protection FROM repos WHERE id = ?", (repo_id,)).fetchone()
        rules = json.loads(row["protection"]) if row and row["protection"] else {}
        if rule is None:
            rules.pop(branch, None)
        else:
            rules[branch] = rule
        db.execute("UPDATE repos SET protection = ? WHERE id = ?", (json.dumps(rules) if rules else None, repo_id))


def latest_statuses(hub: Hub, repo_id: int, sha: str) -> dict[str, str]:
    """context -> state of the newest status per context on a commit."""
    rows = hub.store.all("SELECT context, state FROM statuses WHERE repo_id = ? AND sha = ? ORDER BY id",
                         repo_id, sha)
    return {row["context"]: row["state"] for row in rows}


def reviews(hub: Hub, pull: Any) -> tuple[int, bool]:
    """(approvals, changes requested) from each reviewer's latest decisive review. As with
    GitHub's required reviews, only reviewers with write access count (now, not when they
    reviewed), and never the pull request's author."""
    rows = hub.store.all(
        "SELECT user_id, state FROM reviews WHERE repo_id = ? AND number = ? ORDER BY submitted_at, id",
        pull["repo_id"], pull["number"])
    latest: dict[int, str] = {}
    for row in rows:
        if row["user_id"] != pull["user_id"] and row["state"] in DECISIVE_REVIEWS:
            latest[row["user_id"]] = row["state"]
    repo = hub.repo_by_id(pull["repo_id"])
    states = [state for user_id, state in latest.items() if hub.may("write", hub.user(user_id), repo)]
    return states.count("APPROVED"), "CHANGES_REQUESTED" in states


def blockers(hub: Hub, repo: Any, pull: Any) -> list[str]:
    """Why protection forbids merging now (GitHub's messages), empty when it does not."""
    rule = protection(repo, pull["base_ref"])
    if rule is None:
        return []
    found = []
    required = int(rule.get("required_approving_review_count") or 0)
    if required > 0:
        approvals, changes = reviews(hub, pull)
        if changes:
            found.append(messages.CHANGES_REQUESTED)
        elif approvals < required:
            found.append(messages.REVIEW_REQUIRED_ONE if required == 1
                         else messages.REVIEW_REQUIRED_MANY.format(count=required))
    contexts = [str(c) for c in rule.get("required_status_checks") or []]
    if contexts:
        states = latest_statuses(hub, pull["repo_id"], pull["head_sha"])
        failing = [c for c in contexts if states.get(c) in ("failure", "error")]
        missing = [c for c in contexts if states.get(c) not in ("success", "failure", "error")]
        if failing:
            found.append(messages.STATUS_FAILING_ONE.format(context=failing[0]) if len(contexts) == 1 else
                         messages.STATUS_FAILING_MANY.format(failing=len(failing), total=len(contexts)))
        elif missing:
            found.append(messages.STATUS_EXPECTED_ONE.format(context=missing[0]) if len(contexts) == 1 else
                         messages.STATUS_EXPECTED_MANY.format(missing=len(missing), total=len(contexts)))
    return found


def behind(hub: Hub, repo: Any, pull: Any, git: pygit2.Repository | None = None) -> bool:
    """Strict protection only: the head does not contain the base branch's tip."""
    rule = protection(repo, pull["base_ref"])
    if not rule or not rule.get("strict"):
        return False
    git = git or hub.git(repo)
    base = merging.branch_tip(git, pull["base_ref"]) or pull["base_sha"]
    return not merging.contains(git, pull["head_sha"], base)


def state(hub: Hub, repo: Any, pull: Any) -> str:
    """GitHub's `mergeable_state`, from the stored merge result and the live reviews,
    statuses and protection (which change without the head or base moving)."""
    if pull["mergeable"] is None:
        return "unknown"
    if not pull["mergeable"]:
        return "dirty"
    if pull["draft"]:
        return "draft"
    if pull["state"] == "open":
        if blockers(hub, repo, pull):
            return "blocked"
        if behind(hub, repo, pull):
            return "behind"
    if any(s in NOT_GREEN for s in latest_statuses(hub, pull["repo_id"], pull["head_sha"]).values()):
        return "unstable"
    return "clean"


def key(head_sha: str, base_sha: str) -> str:
    return f"{head_sha}:{base_sha}"


# ---------------------------------------------------------------------------- background work

class Mergeability:
    """The background worker: one thread running due jobs (merge checks, update-branch
    merges) in order, stopped by `hub.close()`."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self._jobs: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="localhub-mergeability", daemon=True)
        self._thread.start()
        hub.on_close.append(self.close)

    # -------------------------------------------------------------- scheduling
    def later(self, delay: float, job: Callable[[], None]) -> None:
        with self._cond:
            if self._stopping:
                return
            heapq.heappush(self._jobs, (time.monotonic() + delay, next(self._seq), job))
            self._cond.notify()

    def close(self) -> None:
        with self._cond:
            self._stopping = True
            self._jobs.clear()
            self._cond.notify()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=10)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._stopping and (not self._jobs or self._jobs[0][0] > time.monotonic()):
                    timeout = self._jobs[0][0] - time.monotonic() if self._jobs else None
                    self._cond.wait(timeout)
                if self._stopping:
                    return
                _, _, job = heapq.heappop(self._jobs)
            try:
                job()
            except Exception:  # a failed job must not stop the worker
                log.exception("background job failed")

    # -------------------------------------------------------------- mergeability
    def reset(self, *pull_ids: int) -> None:
        """Heads or bases moved: forget the results, and try the merges soon (one transaction
        for all: a push to a base resets every open pull request onto it)."""
        keys: list[tuple[int, str]] = []
        with self.hub.store.tx() as db:
            for pull_id in pull_ids:
                row = db.execute("SELECT * FROM pulls WHERE id = ?", (pull_id,)).fetchone()
                if row is None:
                    continue
                new_key = key(row["head_sha"], row["base_sha"])
                db.execute("UPDATE pulls SET mergeable = NULL, rebaseable = NULL, mergeable_state = 'unknown', "
                           "mergeable_key = ?, merge_commit_sha = CASE WHEN merged_at IS NULL THEN NULL "
                           "ELSE merge_commit_sha END WHERE id = ?", (new_key, pull_id))
                keys.append((pull_id, new_key))
        for pull_id, new_key in keys:
            self.later(FALLBACK_DELAY, functools.partial(self.compute, pull_id, new_key))

    def wanted(self, pull: Any) -> None:
        """Someone read the pull request while its mergeability was unknown: start now."""
        if pull["state"] == "open" and pull["mergeable"] is None:
            self.later(0, lambda: self.compute(pull["id"]))

    def compute(self, pull_id: int, only_for: str | None = None) -> None:
        """Try the merge for the pull request's current key (or only if it still is
        `only_for`: a fallback is for the change that scheduled it); store the result unless
        the key changed meanwhile."""
        hub = self.hub
        row = hub.store.one("SELECT * FROM pulls WHERE id = ?", pull_id)
        if row is None or row["state"] != "open" or row["mergeable"] is not None or not row["mergeable_key"]:
            return
        if only_for is not None and row["mergeable_key"] != only_for:
            return
        job_key = row["mergeable_key"]
        head, _, base = job_key.partition(":")
        repo = hub.repo_by_id(row["repo_id"])
        git = hub.git(repo)
        test_merge: str | None = None
        try:
            github = merging.github_signature()
            test_merge = merging.merge_commit(git, base, head, f"Merge {head} into {base}", github, github)
            mergeable = True
        except merging.MergeConflict:
            mergeable = False
        except (KeyError, ValueError, pygit2.GitError):
            log.warning("cannot compute mergeability of pull %s (%s)", pull_id, job_key)
            return
        rebaseable = mergeable and merging.rebases_cleanly(git, base, head)
        computed = {**dict(row), "mergeable": int(mergeable)}
        with hub.store.tx() as db:
            db.execute("UPDATE pulls SET mergeable = ?, rebaseable = ?, mergeable_state = ?, merge_commit_sha = ? "
                       "WHERE id = ? AND mergeable_key = ? AND state = 'open'",
                       (int(mergeable), int(rebaseable), state(hub, repo, computed), test_merge,
                        pull_id, job_key))

    def compute_now(self, pull_id: int) -> Any:
        """Compute in the caller's thread (a merge needs the answer) and return the row."""
        self.compute(pull_id)
        return self.hub.store.one("SELECT * FROM pulls WHERE id = ?", pull_id)


def touch(hub: Hub, pull_id: int) -> None:
    """Record that a pull request changed (GitHub's `updated_at`)."""
    with hub.store.tx() as db:
        db.execute("UPDATE pulls SET updated_at = ? WHERE id = ?", (now(), pull_id))
