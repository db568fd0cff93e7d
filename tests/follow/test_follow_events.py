"""`memrepo follow --events` against the whole stack (`memrepo serve --local` as a real process):
a dream pull request merged by the integrator reaches the folder through the head event on the
receiver's stream, opened with the token in the folder's origin URL, while the follower polls too
rarely to have fetched it; the harness's own commit goes the other way; SIGINT stops it with
exit 0 and no traceback."""

from __future__ import annotations

from pathlib import Path

import github

from bot.memfs import sync
from bot.memfs.create import init_repository
from tests.conftest import git
from tests.follow.test_follow import Follow, converged, forge_main, harness_commit, note
from tests.memory_forge import open_dream
from tests.served import LocalStack
from tests.waiting import wait_until

MERGE_TIMEOUT = 45.0
FACTS = "reference/facts.md"
FACTS_TEXT = "---\ndescription: Facts about the person.\n---\n# Facts\n\n- lives in Berlin\n"


def test_a_merged_dream_reaches_the_folder_through_the_event_stream(served: LocalStack, tmp_path: Path) -> None:
    token = served.new_token("alice")
    github.Github(auth=github.Auth.Token(token), base_url=served.api, retry=None).get_user().create_repo("memory")
    url = served.web.replace("http://", f"http://x-access-token:{token}@") + "/alice/memory.git"
    folder = init_repository(tmp_path / "folder", "a1", "Ada")
    sync.set_remote(folder, url)
    clone = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", url, str(clone))
    events = f"{served.receiver}/v1/repos/alice/memory/events"

    with Follow("--repo", str(folder.root), "--events", events, "--poll", "3600") as follow:
        wait_until(lambda: follow.said("memrepo follow: following"), 20, follow.output)
        assert f"head events from {events}" in follow.out[0]

        open_dream(served.api, token, clone, FACTS, FACTS_TEXT)
        wait_until(lambda: (folder.root / FACTS).exists(), MERGE_TIMEOUT,
                   lambda: follow.output() + "the stack said:\n" + "".join(served.output)
                   + served.worker_log.read_text()[-3000:])
        assert (folder.root / FACTS).read_text() == FACTS_TEXT
        # the file is on disk a moment before the follower's pass ends (the ref moves last)
        wait_until(lambda: converged(folder.root, url), MERGE_TIMEOUT, follow.output)
        wait_until(lambda: follow.said("fast-forwarded main by"), MERGE_TIMEOUT, follow.output)

        mine = harness_commit(folder.root, "reference/mine.md", note("Mine."), "harness: mine")
        wait_until(lambda: forge_main(url) == mine, 20, follow.output)

        assert follow.stop() == 0, follow.output()
    assert "Traceback" not in "".join(follow.err), follow.output()
    assert follow.out[-1] == f"memrepo follow: stopped following {folder.root}\n"
