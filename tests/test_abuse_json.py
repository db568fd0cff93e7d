"""Bounds on JSON from outside that the SDKs and clients memrepo builds on would parse unbounded.

A hostile forge (or anything in GitHub's place) can answer 100,000 nested brackets, which
PyGithub's own json.loads meets with RecursionError, or a body of hundreds of megabytes: the
forge client reads every answer through bot/bounded_json.py and a length bound, so either is one
forge error naming the operation.
"""

from __future__ import annotations

import pytest
import responses

from bot.bounded_json import MAX_DEPTH
from bot.forge.client import AppCredentials, ForgeClient, TokenCredentials
from bot.forge.errors import BadAnswer, ForgeError, NotFound
from bot.forge.retry import RetryPolicy
from tests.test_forge_client import _private_key

DEEP = 100_000
API = "https://api.github.com"
API_SENT = "https://api.github.com:443"  # PyGithub names the port; `responses` matches URLs as sent


def nested(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


def forge() -> ForgeClient:
    return ForgeClient("acme/memory", TokenCredentials("ghp_secret_value"), base_url=API, min_write_interval=0,
                       sleep=lambda _: None, policy=RetryPolicy(max_total_seconds=5.0))


# ------------------------------------------------------------------------------ forge answers
@responses.activate
@pytest.mark.parametrize("status", [200, 404, 422])
def test_a_deep_forge_answer_is_one_forge_error_not_a_recursion_error(status: int) -> None:
    responses.get(f"{API_SENT}/repos/acme/memory/pulls/7", status=status,
                  body='{"message": ' + nested(DEEP) + "}", content_type="application/json")
    with pytest.raises(ForgeError) as caught:
        forge().get_pull_request(7)
    message = str(caught.value)
    assert "\n" not in message and f"deeper than {MAX_DEPTH}" in message
    assert message.startswith("read pull request #7 of acme/memory")
    assert isinstance(caught.value, BadAnswer if status == 200 else NotFound if status == 404 else ForgeError)


@responses.activate
def test_a_deep_answer_to_a_paged_list_is_one_forge_error() -> None:
    responses.get(f"{API_SENT}/repos/acme/memory/pulls", body=nested(DEEP), content_type="application/json")
    with pytest.raises(BadAnswer, match=f"deeper than {MAX_DEPTH}"):
        forge().list_open_pull_requests()


@responses.activate
def test_a_huge_forge_answer_is_refused_unparsed() -> None:
    body = '{"number": 7, "title": "' + "x" * (64 * 1024 * 1024) + '"}'
    responses.get(f"{API_SENT}/repos/acme/memory/pulls/7", body=body, content_type="application/json")
    with pytest.raises(BadAnswer) as caught:
        forge().get_pull_request(7)
    assert "\n" not in str(caught.value) and "longer than" in str(caught.value)


@responses.activate
def test_a_broken_json_answer_is_a_bad_answer_not_a_traceback() -> None:
    responses.get(f"{API_SENT}/repos/acme/memory/pulls/7", body='{"number": 7,', content_type="application/json")
    with pytest.raises(BadAnswer, match="read pull request #7"):
        forge().get_pull_request(7)


@responses.activate
def test_is_merged_reads_a_deep_404_as_not_merged_and_a_deep_200_as_one_forge_error() -> None:
    responses.get(f"{API_SENT}/repos/acme/memory/pulls/7/merge", status=404, body=nested(DEEP))
    responses.get(f"{API_SENT}/repos/acme/memory/pulls/8/merge", status=200, body=nested(DEEP))
    assert forge().is_merged(7) is False
    with pytest.raises(ForgeError, match=f"deeper than {MAX_DEPTH}"):
        forge().is_merged(8)


@responses.activate
def test_a_deep_installation_token_answer_is_one_forge_error() -> None:
    """The App's own calls (its installation token) are parsed by PyGithub: its RecursionError
    is the one forge error too."""
    client = ForgeClient("acme/memory", AppCredentials(42, _private_key(), installation_id=5), base_url=API,
                         min_write_interval=0, sleep=lambda _: None)
    responses.post(f"{API_SENT}/app/installations/5/access_tokens", status=201, body=nested(DEEP))
    with pytest.raises(BadAnswer) as caught:
        client.get_pull_request(7)
    assert "\n" not in str(caught.value) and "installation token" in str(caught.value)
