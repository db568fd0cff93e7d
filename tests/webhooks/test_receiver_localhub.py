"""End to end: localhub sends real signed webhooks to the receiver on a real port; a pull request
is one integrate job and a person's push to main reaches agents as a head event."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import redis

from bot.notify.publisher import subscribe
from bot.queue import (
    INTEGRATE,
    job_key,
)
from tests.conftest import localhub_token
from tests.webhooks.deliveries import (
    REPO,
    SECRET,
    Served,
    make_settings,
    queued,
)
from webhooks.intake import create_app


def test_localhub_webhooks_reach_the_receiver_and_enqueue_one_job(localhub: Any, redis_url: str,
                                                                   rclient: redis.Redis, tmp_path: Path) -> None:
    from tests.localhub.test_localhub_issues import Checkout, open_pull
    from tests.localhub.test_localhub_issues import client as github_client
    from tests.localhub.test_localhub_webhooks import settle

    receiver = Served(create_app(make_settings(redis_url, repos=frozenset({REPO}))))
    try:
        alice = localhub_token(localhub, "alice")
        bob = localhub_token(localhub, "bob")
        repo = github_client(localhub, alice).get_user().create_repo("memory", auto_init=True)
        repo.add_to_collaborators("bob", "push")  # bob pushes the branch
        repo.create_hook("web", {"url": f"{receiver.url}/webhooks/github", "content_type": "json",
                                 "secret": SECRET}, ["*"])
        checkout = Checkout.clone(localhub, bob, REPO, tmp_path / "bob")
        settle(localhub)
        checkout.commit("memrepo/dream/20260301T120000Z-0a1b2c3d", {"notes/ada.md": "# Ada\n"}, "Add Ada")
        checkout.push("memrepo/dream/20260301T120000Z-0a1b2c3d")
        with subscribe(rclient, REPO) as sub:
            number = open_pull(localhub, bob, REPO, "memrepo/dream/20260301T120000Z-0a1b2c3d")
            deliveries = settle(localhub)
            assert {(d["event"], d["status_code"]) for d in deliveries} == {
                ("ping", 200), ("push", 202), ("pull_request", 202)}
            [job] = queued(rclient)
            assert (job.id, job.func_name, job.args) == (job_key(REPO, number), INTEGRATE, [REPO, number])
            assert job.id == f"integrate-alice_2Fmemory-{number}"
            # A person edits memory on main: agents hear of it.
            edited = checkout.commit("main", {"system/human.md": "edited\n"}, "Edit on main")
            checkout.push("main")
            settle(localhub)
            moved = sub.get(timeout=10)
        assert moved is not None and (moved.sha, moved.cause) == (edited, "push")
    finally:
        receiver.close()
