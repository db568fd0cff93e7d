"""claim_shown: a dream's or agent edit's branch name is a claim; its commits show it or not."""

from __future__ import annotations

import pytest

from bot.identity import INTEGRATOR
from bot.integrator.claims import Brought, claim_shown

DREAM = "20260101T000000Z-0123abcd"
OTHER_DREAM = "20260101T000000Z-ffffffff"
DREAM_REF = f"memrepo/dream/{DREAM}"
EDIT_REF = "memrepo/edit/ada/1a2b3c4d"


def dream_commit(dream_id: str = DREAM, email: str | None = None, trailer: str | None = None) -> Brought:
    return Brought(email or f"{dream_id}@dreams.memrepo",
                   f"Dream: consolidate\n\nDream-ID: {trailer or dream_id}\nAgent-ID: ada\n")


def edit_commit(agent: str = "ada", trailer: str | None = "ada") -> Brought:
    trailers = f"\n\nAgent-ID: {trailer}\nConversation-ID: c1\n" if trailer is not None else "\n"
    return Brought(f"{agent}@agents.memrepo", f"Record the user's editor{trailers}")


RESOLUTION = Brought(INTEGRATOR.email, "Merge main into the branch\n", parents=2)
PERSON = Brought("pat@example.com", "Change the persona\n")


@pytest.mark.parametrize(
    ("ref", "commits", "shown"),
    [
        (DREAM_REF, [dream_commit()], True),
        ("refs/heads/" + DREAM_REF, [dream_commit()], True),
        (DREAM_REF, [dream_commit(), RESOLUTION], True),
        (DREAM_REF, [], False),
        (DREAM_REF, [RESOLUTION], False),
        (DREAM_REF, [dream_commit(), PERSON], False),
        (DREAM_REF, [dream_commit(OTHER_DREAM)], False),
        (DREAM_REF, [dream_commit(trailer=OTHER_DREAM)], False),
        (DREAM_REF, [dream_commit(email="memrepo dreamer <x@dreams.memrepo>")], False),
        (DREAM_REF, [Brought(f"{DREAM}@dreams.memrepo", "Dream without trailers\n")], False),
        (DREAM_REF, [Brought(INTEGRATOR.email, "not a merge\n"), dream_commit()], False),
        ("memrepo/dream/not-an-id", [dream_commit()], False),
        (EDIT_REF, [edit_commit()], True),
        (EDIT_REF, [edit_commit(trailer=None)], True),
        (EDIT_REF, [edit_commit(), RESOLUTION], True),
        (EDIT_REF, [edit_commit(trailer="ben")], False),
        (EDIT_REF, [edit_commit(agent="ben", trailer="ben")], False),
        (EDIT_REF, [edit_commit(), PERSON], False),
        (EDIT_REF, [dream_commit()], False),
        ("memrepo/edit/ada", [edit_commit()], False),
        ("memrepo/edit/ada/x/y", [edit_commit()], False),
        ("feature/x", [dream_commit()], False),
        ("feature/x", [edit_commit()], False),
    ],
    ids=["dream", "dream-full-ref", "dream-resolved", "dream-empty", "dream-only-resolution", "dream-and-person",
         "dream-other-dreams-commit", "dream-trailer-other-dream", "dream-lookalike-author", "dream-no-trailer",
         "integrator-non-merge", "dream-branch-bad-id", "edit", "edit-no-trailer", "edit-resolved",
         "edit-trailer-other-agent", "edit-other-agent", "edit-and-person", "edit-branch-dream-commit",
         "edit-branch-no-short-id", "edit-branch-too-deep", "other-branch-dream", "other-branch-edit"],
)
def test_claim_shown(ref: str, commits: list[Brought], shown: bool) -> None:
    assert claim_shown(ref, commits) is shown
