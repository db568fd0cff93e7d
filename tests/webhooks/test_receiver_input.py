"""Signed deliveries the receiver must refuse before anything is enqueued: JSON nested deeper
than bot/bounded_json.py's bound (a body of 100,000 brackets once ended in RecursionError and a
500) and numbers no forge can have (a pull request number of 10**30 was enqueued and retried
against the forge). Against the real receiver on a real Redis, as GitHub sends them; and the
depth scan itself, property-tested against json.loads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import redis
from flask.testing import FlaskClient
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.bounded_json import MAX_DEPTH, nesting_depth
from bot.queue import INTEGRATE, MAX_NUMBER, enqueue_integrate, job_key
from tests.webhooks.deliveries import REPO, deliver, pull_request, push, queued, repository
from webhooks.intake.payload import WEBHOOK_TOO_DEEP, PayloadError, loads, parse_payload
from webhooks.intake.routing import WEBHOOK_OUT_OF_RANGE

ROOT = Path(__file__).resolve().parents[2]


def queue_state(rclient: redis.Redis) -> tuple[list[tuple[str, str, tuple[Any, ...]]], list[bytes]]:
    """The jobs waiting and every key in Redis (delivery ids included)."""
    return [(j.id, j.func_name, tuple(j.args)) for j in queued(rclient)], sorted(rclient.keys("*"))


@pytest.fixture
def before(client: FlaskClient, rclient: redis.Redis) -> tuple[Any, ...]:
    """One ordinary delivery accepted first, so "unchanged" is about a queue that has a job."""
    assert deliver(client, "pull_request", pull_request(number=7)).status_code == 202
    state = queue_state(rclient)
    assert state[0] == [(job_key(REPO, 7), INTEGRATE, (REPO, 7))]
    return state


def nested(depth: int) -> bytes:
    """A pull_request delivery whose payload nests `depth` levels: the object itself is one,
    its `padding` array the rest."""
    payload = json.dumps(pull_request(number=12))
    arrays = depth - 1
    return (payload[:-1] + ', "padding": ' + "[" * arrays + "]" * arrays + "}").encode()


# ------------------------------------------------------------------------------ depth, end to end
TOO_DEEP = WEBHOOK_TOO_DEEP.format(limit=MAX_DEPTH)


def test_a_body_of_100000_nested_brackets_is_400_and_enqueues_nothing(client: FlaskClient, rclient: redis.Redis,
                                                                       before: tuple[Any, ...]) -> None:
    resp = deliver(client, "pull_request", None, body=nested(100_001))
    assert resp.status_code == 400
    assert resp.json == {"message": TOO_DEEP}
    assert queue_state(rclient) == before


def test_a_form_encoded_body_nested_too_deep_is_400(client: FlaskClient, rclient: redis.Redis,
                                                    before: tuple[Any, ...]) -> None:
    body = urlencode({"payload": nested(100_001).decode()}).encode()
    resp = deliver(client, "pull_request", None, body=body,
                   headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert (resp.status_code, resp.json) == (400, {"message": TOO_DEEP})
    assert queue_state(rclient) == before


def test_a_utf16_body_nested_too_deep_is_400(client: FlaskClient, rclient: redis.Redis,
                                             before: tuple[Any, ...]) -> None:
    """json.loads reads UTF-16 and -32 bodies too; the scan reads what it reads."""
    resp = deliver(client, "pull_request", None, body=nested(MAX_DEPTH + 1).decode().encode("utf-16"))
    assert (resp.status_code, resp.json) == (400, {"message": TOO_DEEP})
    assert queue_state(rclient) == before
    resp = deliver(client, "pull_request", None, body=json.dumps(pull_request(number=9)).encode("utf-16"))
    assert resp.status_code == 202


def test_the_bound_is_64_levels_exactly(client: FlaskClient, rclient: redis.Redis) -> None:
    assert nesting_depth(nested(MAX_DEPTH).decode()) == MAX_DEPTH == 64
    resp = deliver(client, "pull_request", None, body=nested(MAX_DEPTH + 1))
    assert (resp.status_code, resp.json) == (400, {"message": TOO_DEEP})
    assert rclient.dbsize() == 0
    resp = deliver(client, "pull_request", None, body=nested(MAX_DEPTH))
    assert resp.status_code == 202
    assert [j.id for j in queued(rclient)] == [job_key(REPO, 12)]


def test_brackets_inside_strings_are_text(client: FlaskClient, rclient: redis.Redis) -> None:
    payload = {**pull_request(number=12), "title": "[" * 100_000 + '\\"{' * 1000, "body": "]" * 5}
    resp = deliver(client, "pull_request", payload)
    assert resp.status_code == 202
    assert [j.id for j in queued(rclient)] == [job_key(REPO, 12)]


def test_githubs_own_payloads_nest_a_tenth_of_the_bound() -> None:
    """The schemas of the events memrepo reads (@octokit/webhooks-schemas, trimmed in
    tests/fixtures/github-webhooks): how deep a payload they allow can nest."""
    schemas = json.loads((ROOT / "tests" / "fixtures" / "github-webhooks" / "webhooks.json").read_text())
    definitions = schemas["definitions"]

    def depth(schema: Any, seen: frozenset[str]) -> int:
        if not isinstance(schema, dict):
            return 0
        if "$ref" in schema:
            name = schema["$ref"].rpartition("/")[2]
            assert name not in seen, f"{name} nests itself: no bound"
            return depth(definitions[name], seen | {name})
        found = max((depth(s, seen) for key in ("oneOf", "anyOf", "allOf") for s in schema.get(key, [])), default=0)
        types = schema.get("type") if isinstance(schema.get("type"), list) else [schema.get("type")]
        if "object" in types or "properties" in schema:
            inner = [*schema.get("properties", {}).values(), schema.get("additionalProperties")]
            found = max(found, 1 + max(depth(s, seen) for s in inner))
        if "array" in types or "items" in schema:
            found = max(found, 1 + depth(schema.get("items"), seen))
        return found

    events = [name for name in definitions if "$" in name]
    deepest = max(depth(definitions[name], frozenset({name})) for name in events)
    assert {name.partition("$")[0] for name in events} >= {"pull_request", "pull_request_review", "issue_comment",
                                                           "push", "status"}
    assert deepest == 6
    assert 10 * deepest <= MAX_DEPTH


# ------------------------------------------------------------------------------ numbers, end to end
def shown(value: int) -> str:
    text = str(value)
    return text if len(text) <= 24 else f"{text[:12]}... ({len(text)} digits)"


def without(payload: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if k != key}


def review(number: Any) -> dict[str, Any]:
    return {"action": "submitted", "pull_request": {"number": number}, "repository": repository(),
            "sender": {"login": "carol"}}


def comment(number: Any) -> dict[str, Any]:
    return {"action": "created", "issue": {"number": number, "pull_request": {"url": "u"}},
            "repository": repository(), "sender": {"login": "carol"}}


def check_suite(number: Any) -> dict[str, Any]:
    return {"action": "completed", "check_suite": {"head_sha": "1" * 40, "pull_requests": [{"number": number}]},
            "repository": repository(), "sender": {"login": "ci"}}


OUT_OF_RANGE = [
    ("pull_request", pull_request(number=10**30), "number", 10**30),
    ("pull_request", pull_request(number=2**63), "number", 2**63),
    ("pull_request", pull_request(number=0), "number", 0),
    ("pull_request", pull_request(number=-12), "number", -12),
    ("pull_request", {**without(pull_request(), "number"), "pull_request": {"number": 10**30}}, "number", 10**30),
    ("pull_request_review", review(10**30), "pull_request.number", 10**30),
    ("issue_comment", comment(10**30), "issue.number", 10**30),
    ("check_suite", check_suite(10**30), "check_suite.pull_requests.number", 10**30),
    ("push", {**push(), "repository": {**repository(), "id": 10**30}}, "repository.id", 10**30),
    ("pull_request", {**pull_request(), "installation": {"id": -1}}, "installation.id", -1),
    ("pull_request", {**pull_request(), "installation": {"id": 2**64}}, "installation.id", 2**64),
]


@pytest.mark.parametrize(("event", "payload", "field", "value"), OUT_OF_RANGE,
                         ids=[f"{e}-{f}-{v if len(str(v)) < 8 else 'huge'}" for e, _, f, v in OUT_OF_RANGE])
def test_numbers_out_of_range_are_400_and_enqueue_nothing(client: FlaskClient, rclient: redis.Redis,
                                                          before: tuple[Any, ...], event: str, payload: dict[str, Any],
                                                          field: str, value: int) -> None:
    resp = deliver(client, event, payload)
    assert resp.status_code == 400
    assert resp.json == {"message": WEBHOOK_OUT_OF_RANGE.format(event=event, field=field,
                                                                               value=shown(value))}
    assert queue_state(rclient) == before


def test_the_message_shortens_a_huge_number() -> None:
    assert shown(10**30) == "100000000000... (31 digits)"
    assert shown(2**63) == "9223372036854775808"


def test_the_largest_number_github_could_send_is_enqueued(client: FlaskClient, rclient: redis.Redis) -> None:
    payload = {**pull_request(number=MAX_NUMBER), "repository": {**repository(), "id": MAX_NUMBER},
               "installation": {"id": 1}}
    assert MAX_NUMBER == 2**63 - 1
    resp = deliver(client, "pull_request", payload)
    assert resp.status_code == 202
    [job] = queued(rclient)
    assert (job.func_name, tuple(job.args)) == (INTEGRATE, (REPO, MAX_NUMBER))


def test_the_queue_refuses_such_numbers_too(rclient: redis.Redis) -> None:
    """Whatever calls it, not only the receiver."""
    for number in (10**30, MAX_NUMBER + 1, 0):
        with pytest.raises(ValueError, match="not a pull request number"):
            enqueue_integrate(rclient, REPO, number)
    assert rclient.dbsize() == 0


# ------------------------------------------------------------------------------ the scan, pure
def depth_of(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max(map(depth_of, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(depth_of, value.values()), default=0)
    return 0


TRICKY = st.text(alphabet='[]{}"\\,: /\nabé😀\u2028\x00\x1f', max_size=12)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8), TRICKY)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.one_of(st.text(max_size=4), TRICKY), inner,
                                                                       max_size=4)), max_leaves=40)
DUMPS = st.fixed_dictionaries({"ensure_ascii": st.booleans(), "indent": st.sampled_from([None, 0, 2, "\t"]),
                               "separators": st.sampled_from([None, (",", ":"), (" , ", " : ")])})


@settings(max_examples=300)
@given(VALUES, DUMPS)
def test_the_scan_measures_what_json_parses(value: Any, options: dict[str, Any]) -> None:
    text = json.dumps(value, **options)
    assert nesting_depth(text) == depth_of(value)
    assert loads(text) == json.loads(text)


@settings(max_examples=300)
@given(st.text(alphabet='[]{}"\\,:1 a', max_size=40))
def test_on_any_text_the_scan_agrees_with_json_or_json_refuses_it(text: str) -> None:
    try:
        parsed = json.loads(text)
    except ValueError:
        with pytest.raises(PayloadError):
            loads(text)
        return
    assert nesting_depth(text) == depth_of(parsed)
    assert loads(text) == parsed


@given(st.integers(min_value=0, max_value=5000), st.integers(min_value=0, max_value=200), st.booleans())
def test_nesting_past_the_bound_is_refused_before_json_sees_it(depth: int, bound: int, objects: bool) -> None:
    text = ('{"a":' * depth + "1" + "}" * depth) if objects else ("[" * depth + "1" + "]" * depth)
    assert nesting_depth(text) == depth
    assert (nesting_depth(text, stop_above=bound) > bound) == (depth > bound)
    if depth > bound:
        with pytest.raises(PayloadError, match=f"deeper than {bound} levels"):
            loads(text, bound)
    else:
        assert depth_of(loads(text, bound)) == depth


def test_the_bound_holds_across_the_scans_chunks() -> None:
    flat = "[" + "[1]," * 40_000  # 80,000 brackets before the deep part: past the first chunk
    assert nesting_depth(flat + "[" * 70 + "]" * 70 + ",[]]") == 71
    with pytest.raises(PayloadError):
        loads(flat + "[" * 70 + "]" * 70 + ",[]]")
    assert depth_of(loads(flat + "[" * 62 + "]" * 62 + ",[]]")) == 63


def test_parse_payload_keeps_its_answers() -> None:
    assert parse_payload(b'{"a": 1}', "application/json") == {"a": 1}
    assert parse_payload(b"payload=%7B%22a%22%3A1%7D", "application/x-www-form-urlencoded; charset=utf-8") == {"a": 1}
    for body, words in ((b"[1]", "found array"), (b"\xff\xfe\x00", "not JSON"), (b"1" * 5000, "not JSON")):
        with pytest.raises(PayloadError, match=words):
            parse_payload(body, "application/json")
