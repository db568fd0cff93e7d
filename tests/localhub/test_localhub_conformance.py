"""The conformance checker itself (tests/conformance.py): path matching, OpenAPI 3.0 schema
conversion, readable failures, error shapes, and the recorder around a WSGI app. If these
were wrong, every localhub test would pass or fail for the wrong reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from flask import Flask, Response, jsonify

from localhub import shapes
from localhub.hub import Hub
from tests.conformance import FIXTURE, Erratum, Recorder, Spec, apply_errata, json_schema, load_spec, validator


@pytest.fixture(scope="module")
def spec() -> Spec:
    return load_spec()


def label(**changes: Any) -> dict[str, Any]:
    body = {"id": 208045946, "node_id": "MDU6TGFiZWwyMDgwNDU5NDY=",
            "url": "https://api.github.com/repos/octocat/Hello-World/labels/bug", "name": "bug",
            "description": None, "color": "f29513", "default": True}
    body.update(changes)
    return body


def test_the_fixture_names_its_source_and_stays_small() -> None:
    data = json.loads(FIXTURE.read_text())
    assert data["source"]["package"] == "@octokit/openapi"
    assert data["source"]["license"] == "MIT"
    assert (FIXTURE.parent / "LICENSE").read_text().startswith("MIT License")
    assert FIXTURE.stat().st_size < 2_000_000
    assert len(data["operations"]) == 61
    assert "description" not in data["errors"]["basic-error"]


@pytest.mark.parametrize(("method", "path", "template"), [
    ("GET", "/api/v3/user", "/user"),
    ("GET", "/api/v3/users/alice", "/users/{username}"),
    ("GET", "/api/v3/repos/o/r", "/repos/{owner}/{repo}"),
    ("GET", "/api/v3/repos/o/r/pulls/12", "/repos/{owner}/{repo}/pulls/{pull_number}"),
    ("PUT", "/repos/o/r/pulls/12/merge", "/repos/{owner}/{repo}/pulls/{pull_number}/merge"),
    ("GET", "/repos/o/r/commits/abc123", "/repos/{owner}/{repo}/commits/{ref}"),
    ("GET", "/repos/o/r/commits/feature/x", "/repos/{owner}/{repo}/commits/{ref}"),
    ("GET", "/repos/o/r/commits/abc123/status", "/repos/{owner}/{repo}/commits/{ref}/status"),
    ("GET", "/repos/o/r/commits/abc123/statuses", "/repos/{owner}/{repo}/commits/{ref}/statuses"),
    ("GET", "/repos/o/r/commits/abc123/pulls", "/repos/{owner}/{repo}/commits/{commit_sha}/pulls"),
    ("GET", "/repos/o/r/git/ref/heads/feature/x", "/repos/{owner}/{repo}/git/ref/{ref}"),
    ("PATCH", "/repos/o/r/git/refs/heads/a/b", "/repos/{owner}/{repo}/git/refs/{ref}"),
    ("POST", "/repos/o/r/git/refs", "/repos/{owner}/{repo}/git/refs"),
    ("GET", "/repos/o/r/contents/notes/2024/a.md", "/repos/{owner}/{repo}/contents/{path}"),
    ("GET", "/repos/o/r/compare/main...feature/x", "/repos/{owner}/{repo}/compare/{basehead}"),
    ("GET", "/repos/o/r/issues/comments/5", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("GET", "/repos/o/r/issues/5/comments", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("DELETE", "/repos/o/r/issues/5/labels/area/ui", "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}"),
    ("POST", "/repos/o/r/hooks/3/deliveries/9/attempts",
     "/repos/{owner}/{repo}/hooks/{hook_id}/deliveries/{delivery_id}/attempts"),
    ("POST", "/api/v3/app/installations/70001/access_tokens", "/app/installations/{installation_id}/access_tokens"),
])
def test_paths_match_the_most_specific_template(spec: Spec, method: str, path: str, template: str) -> None:
    op = spec.match(method, path)
    assert op is not None
    assert op.path == template


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/api/v3/repos/o/r/pulls/abc"),      # numbers are digits
    ("POST", "/api/v3/repos/o/r"),               # no such method on the path
    ("GET", "/api/v3/repos/o/r/issues"),         # not an operation localhub implements
    ("GET", "/api/v3/repos/o/r/pulls/1/extra"),
])
def test_paths_outside_the_operations_do_not_match(spec: Spec, method: str, path: str) -> None:
    assert spec.match(method, path) is None


def test_a_valid_body_passes(spec: Spec) -> None:
    assert spec.check("GET", "/api/v3/repos/o/r/labels/bug", 200, label()) is None
    assert spec.check("GET", "/api/v3/repos/o/r/labels", 200, [label(), label(description="x")]) is None


def test_a_missing_required_field_fails_naming_it(spec: Spec) -> None:
    body = label()
    del body["color"]
    problem = spec.check("GET", "/api/v3/repos/o/r/labels/bug", 200, body)
    assert problem == ("GET /repos/{owner}/{repo}/labels/{name} (issues/get-label) -> 200: "
                       "$: 'color' is a required property")


def test_a_wrong_type_fails_with_the_json_path(spec: Spec) -> None:
    problem = spec.check("GET", "/api/v3/repos/o/r/labels", 200, [label(), label(id="208045946")])
    assert problem is not None
    assert problem.endswith("$[1].id: '208045946' is not of type 'integer'")


def test_nullable_allows_null_only_where_the_spec_says(spec: Spec) -> None:
    assert spec.check("GET", "/repos/o/r/labels/bug", 200, label(description=None)) is None
    problem = spec.check("GET", "/repos/o/r/labels/bug", 200, label(name=None))
    assert problem is not None and "$.name: None is not of type 'string'" in problem


@pytest.mark.parametrize(("value", "ok"), [
    ("2011-01-26T19:01:12Z", True), ("2011-01-26T19:01:12.5+02:00", True),
    ("2011-01-26 19:01:12", False), ("2011-13-26T19:01:12Z", False), ("1296068472", False),
])
def test_date_times_are_rfc3339(value: str, ok: bool) -> None:
    check = validator({"type": "string", "format": "date-time"})
    assert check.is_valid(value) is ok


@pytest.mark.parametrize(("value", "ok"), [
    ("https://api.github.com/repos/o/r", True), ("http://127.0.0.1:5000/o/r.git", True),
    ("/repos/o/r", False), ("", False), ("http://a b", False),
])
def test_uris_are_absolute(value: str, ok: bool) -> None:
    assert validator({"type": "string", "format": "uri"}).is_valid(value) is ok


def test_openapi_30_keywords_become_json_schema() -> None:
    assert json_schema({"type": "string", "nullable": True, "enum": ["a"]}) == {"type": ["string", "null"],
                                                                               "enum": ["a", None]}
    assert json_schema({"allOf": [{"type": "object"}], "nullable": True}) == {
        "anyOf": [{"type": "null"}, {"allOf": [{"type": "object"}]}]}
    assert json_schema({"type": "integer", "minimum": 0, "exclusiveMinimum": True}) == {
        "type": "integer", "exclusiveMinimum": 0}
    assert json_schema({"type": "integer", "maximum": 9, "exclusiveMaximum": False}) == {"type": "integer",
                                                                                         "maximum": 9}
    assert json_schema({"type": "string", "nullable": False}) == {"type": "string"}
    # OpenAPI 3.1 schemas are JSON Schema already.
    assert json_schema({"type": "string", "nullable": True}, "3.1.0") == {"type": "string", "nullable": True}


def test_a_oneof_whose_branches_are_all_nullable_accepts_null_once() -> None:
    check = validator({"oneOf": [{"type": "string", "nullable": True}, {"type": "integer", "nullable": True}]})
    assert [check.is_valid(v) for v in (None, "a", 1, 1.5)] == [True, True, True, False]


def test_a_failed_oneof_says_why_each_branch_failed(spec: Spec) -> None:
    problem = spec.check("GET", "/api/v3/user", 200, {"login": "alice"})
    assert problem is not None
    assert "[Private User] $: " in problem and "[Public User] $: " in problem
    assert len(problem) < 400


def test_error_bodies_must_have_githubs_shape(spec: Spec) -> None:
    error = {"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"}
    assert spec.check("GET", "/api/v3/repos/o/r/pulls/1", 404, error) is None
    # A status the spec does not list is fine for an error in GitHub's shape...
    assert spec.check("GET", "/api/v3/repos/o/r/pulls/1", 500, error | {"status": "500"}) is None
    assert spec.check("GET", "/api/v3/nowhere", 404, error) is None
    # ...but not for anything else.
    problem = spec.check("GET", "/api/v3/repos/o/r/pulls/1", 500, {"error": "boom"})
    assert problem is not None and "basic-error shape: $: " in problem and "is a required property" in problem
    problem = spec.check("GET", "/api/v3/repos/o/r/pulls/1", 404, {"message": "Not Found"})
    assert problem is not None and "'documentation_url' is a required property" in problem
    problem = spec.check("GET", "/api/v3/repos/o/r/pulls/1", 404, error | {"status": 404})
    assert problem is not None and "$.status: 404 is not of type 'string'" in problem


def test_validation_errors_are_checked_item_by_item(spec: Spec) -> None:
    good = {"message": "Validation Failed", "documentation_url": "https://docs.github.com/rest",
            "errors": [{"resource": "Label", "field": "name", "code": "already_exists", "value": None}]}
    assert spec.check("POST", "/api/v3/repos/o/r/labels", 422, good) is None
    # Where the spec lists no 422, GitHub's simple form (errors as texts) is an error shape too;
    # where it documents validation-error, only that will do.
    simple = good | {"errors": ["name is taken"]}
    assert spec.check("GET", "/api/v3/repos/o/r/pulls/1/reviews", 422, simple) is None
    problem = spec.check("POST", "/api/v3/repos/o/r/labels", 422, simple)
    assert problem is not None and problem.endswith("$.errors[0]: 'name is taken' is not of type 'object'")
    bad = good | {"errors": [{"resource": "Label", "field": "name"}]}
    problem = spec.check("POST", "/api/v3/repos/o/r/labels", 422, bad)
    assert problem is not None and "'code' is a required property" in problem


def test_undocumented_successes_and_unknown_operations_fail(spec: Spec) -> None:
    problem = spec.check("DELETE", "/api/v3/repos/o/r/issues/comments/5", 200, {"deleted": True})
    assert problem == ("DELETE /repos/{owner}/{repo}/issues/comments/{comment_id} (issues/delete-comment) -> 200: "
                       "status not documented with a JSON body")
    problem = spec.check("GET", "/api/v3/repos/o/r/issues", 200, [])
    assert problem == "GET /api/v3/repos/o/r/issues -> 200: no such operation in operations.json"


def test_errata_correct_known_schema_inaccuracies_only_where_they_apply(spec: Spec) -> None:
    pulls = spec.match("GET", "/api/v3/repos/o/r/pulls")
    assert pulls is not None
    labels = pulls.validator(200).schema["items"]["properties"]["labels"]  # type: ignore[union-attr]
    assert labels["items"]["properties"]["description"] == {"type": ["string", "null"]}
    assert labels["items"]["properties"]["name"] == {"type": "string"}
    # The fixture itself stays as published.
    published = json.loads(FIXTURE.read_text())["operations"]
    listed = next(op for op in published if op["operationId"] == "pulls/list")
    assert listed["responses"]["200"]["items"]["properties"]["labels"]["items"]["properties"]["description"] == {
        "type": "string"}


def test_an_erratum_that_no_longer_applies_stops_the_check() -> None:
    stale = Erratum(("pulls/list",), "200", ("items", "properties", "gone"), {"nullable": True}, "example")
    with pytest.raises(LookupError, match="no longer applies"):
        apply_errata(json.loads(FIXTURE.read_text())["operations"], [stale])


def _app() -> Flask:
    app = Flask("fake")

    @app.get("/api/v3/repos/<owner>/<repo>/labels/<name>")
    def get_label(owner: str, repo: str, name: str) -> Any:
        return jsonify(label(name=name, id=name if name == "wrong" else 1))

    @app.get("/api/v3/broken")
    def broken() -> Any:
        return Response("<h1>Internal Server Error</h1>", status=500, mimetype="text/html")

    @app.get("/api/v3/faulty")
    def faulty() -> Any:
        return Response("{}", status=500, mimetype="application/json", headers={"X-Localhub-Fault": "1"})

    @app.get("/api/v3/diff")
    def diff() -> Any:
        return Response("diff --git a/x b/x\n", mimetype="text/x-diff")

    @app.get("/elsewhere")
    def elsewhere() -> Any:
        return jsonify({"anything": True})

    return app


def test_the_recorder_reports_each_distinct_problem_once() -> None:
    app = _app()
    recorder = Recorder.install(app)
    assert app.extensions["conformance"] is recorder
    client = app.test_client()
    for path in ("/api/v3/repos/o/r/labels/bug", "/api/v3/repos/o/r/labels/wrong", "/api/v3/repos/o/r/labels/wrong",
                 "/api/v3/broken", "/api/v3/faulty", "/api/v3/diff", "/elsewhere"):
        client.get(path)
    assert len(recorder.exchanges) == 6  # /elsewhere is not REST
    problems = recorder.problems()
    assert problems == [
        "GET /repos/{owner}/{repo}/labels/{name} (issues/get-label) -> 200: $.id: 'wrong' is not of type 'integer'"
        "  [2x, e.g. GET /api/v3/repos/o/r/labels/wrong]",
        "GET /api/v3/broken -> 500: error body is text/html, not JSON  [1x, e.g. GET /api/v3/broken]",
    ]
    assert recorder.report().startswith("localhub answered differently from GitHub's OpenAPI description")


def test_the_recorder_passes_responses_through_unchanged() -> None:
    app = _app()
    plain = app.test_client().get("/api/v3/repos/o/r/labels/bug")
    Recorder.install(app)
    recorded = app.test_client().get("/api/v3/repos/o/r/labels/bug")
    assert (recorded.status_code, recorded.get_json()) == (plain.status_code, plain.get_json())


@pytest.fixture
def hub(tmp_path: Path) -> Any:
    hub = Hub(tmp_path / "data", "http://127.0.0.1:5999")
    yield hub
    hub.close()


@pytest.mark.parametrize(("view", "method", "path"), [("private", "GET", "/api/v3/user"),
                                                      ("public", "GET", "/api/v3/users/alice")])
def test_shapes_user_views_conform(spec: Spec, hub: Hub, view: str, method: str, path: str) -> None:
    row = hub.ensure_user("alice")
    assert spec.check(method, path, 200, shapes.user(hub, row, view=view)) is None
    simple = shapes.user(hub, row)
    assert "bio" not in simple  # embedded users stay simple-users, as on GitHub
