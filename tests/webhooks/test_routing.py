"""webhooks/intake/routing.py, pure: which job, head event or nothing each GitHub event becomes."""

from __future__ import annotations

from typing import Any

import pytest

from tests.webhooks.deliveries import (
    BOT,
    REPO,
    SHA1,
    SHA2,
    ZERO,
    make_settings,
    pull_request,
    push,
    repository,
    status,
)
from webhooks.intake.routing import Integrate, IntegrateCommit, PublishHead, Reconcile, route

ROUTES: list[tuple[str, dict[str, Any], tuple[Any, ...]]] = [
    ("pull_request", pull_request("opened"), (Integrate(REPO, 12),)),
    *[("pull_request", pull_request(a), (Integrate(REPO, 12),))
      for a in ("synchronize", "reopened", "labeled", "unlabeled", "edited", "ready_for_review", "closed")],
    ("pull_request", pull_request("assigned"), ()),
    ("pull_request", pull_request("opened", sender=BOT), (Integrate(REPO, 12),)),  # a dreamer acting as the App
    ("pull_request", pull_request("synchronize", sender=BOT), (Integrate(REPO, 12),)),  # its resolution: validate
    ("pull_request", pull_request("labeled", sender=BOT), ()),
    ("pull_request", pull_request("closed", sender=BOT), ()),
    ("pull_request", pull_request("opened", repo="carol/memory"), ()),
    ("pull_request_review", {"action": "submitted", "pull_request": {"number": 3}, "repository": repository(),
                             "sender": {"login": "carol"}}, (Integrate(REPO, 3),)),
    ("pull_request_review", {"action": "edited", "pull_request": {"number": 3}, "repository": repository(),
                             "sender": {"login": "carol"}}, ()),
    ("issue_comment", {"action": "created", "issue": {"number": 4, "pull_request": {"url": "u"}},
                       "repository": repository(), "sender": {"login": "carol"}}, (Integrate(REPO, 4),)),
    ("issue_comment", {"action": "created", "issue": {"number": 4}, "repository": repository(),
                       "sender": {"login": "carol"}}, ()),
    ("issue_comment", {"action": "created", "issue": {"number": 4, "pull_request": {"url": "u"}},
                       "repository": repository(), "sender": {"login": BOT}}, ()),
    ("status", status(sender="ci-bot"), (IntegrateCommit(REPO, SHA2),)),
    ("status", status(sender=BOT), ()),
    ("check_suite", {"action": "completed", "check_suite": {"head_sha": SHA1, "pull_requests": [
        {"number": 5}, {"number": 6}, {"number": 5}]}, "repository": repository(), "sender": {"login": "ci"}},
     (Integrate(REPO, 5), Integrate(REPO, 6))),
    ("check_run", {"action": "completed", "check_run": {"head_sha": SHA1, "pull_requests": []},
                   "repository": repository(), "sender": {"login": "ci"}}, (IntegrateCommit(REPO, SHA1),)),
    ("check_suite", {"action": "requested", "check_suite": {"head_sha": SHA1}, "repository": repository(),
                     "sender": {"login": "ci"}}, ()),
    ("push", push(), (PublishHead(REPO, SHA1, SHA2, "bob"), Reconcile(REPO))),
    ("push", push(sender=BOT), (PublishHead(REPO, SHA1, SHA2, BOT), Reconcile(REPO))),  # its merges are news
    ("push", push(before=ZERO), (PublishHead(REPO, None, SHA2, "bob"), Reconcile(REPO))),
    ("push", push(ref="refs/heads/memrepo/dream/x"), ()),
    ("push", push(after=ZERO), ()),
    ("star", {"action": "created", "repository": repository(), "sender": {"login": "carol"}}, ()),
    ("installation", {"action": "created", "sender": {"login": "carol"}}, ()),
]


@pytest.mark.parametrize(("event", "payload", "actions"), ROUTES)
def test_events_map_to_jobs(event: str, payload: dict[str, Any], actions: tuple[Any, ...]) -> None:
    routed = route(event, payload, make_settings("redis://127.0.0.1:1/0"))
    assert routed.actions == actions
    assert (routed.ignored is None) == bool(actions)
