"""GitHub's page-number pagination for list endpoints: `per_page` (max 100), `page`, and a
`Link` header, which PyGithub's PaginatedList follows."""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import urlencode

from flask import Response, jsonify, request

PER_PAGE = 30
MAX_PER_PAGE = 100


def page_args() -> tuple[int, int]:
    """(per_page, page) from the query string, as GitHub reads them: per_page within 1-100,
    page from 1, and the defaults when either is not a number."""
    try:
        per_page = min(max(int(request.args.get("per_page", PER_PAGE)), 1), MAX_PER_PAGE)
        page = max(int(request.args.get("page", 1)), 1)
    except ValueError:
        per_page, page = PER_PAGE, 1
    return per_page, page


def page_of(items: list[Any]) -> list[Any]:
    """The requested page of `items`, for endpoints that page a list inside their answer
    (a comparison's commits, a combined status's statuses) and send no `Link` header."""
    per_page, page = page_args()
    return items[(page - 1) * per_page:page * per_page]


def paginate(items: list[Any]) -> Response:
    """GitHub's page-number pagination with the `Link` header PyGithub follows."""
    per_page, page = page_args()
    resp = jsonify(page_of(items))
    last = max(1, math.ceil(len(items) / per_page))
    args = request.args.to_dict()

    def link(number: int, rel: str) -> str:
        return f'<{request.base_url}?{urlencode({**args, "per_page": per_page, "page": number})}>; rel="{rel}"'

    links = []
    if page < last:
        links += [link(page + 1, "next"), link(last, "last")]
    if page > 1:
        links += [link(1, "first"), link(min(page - 1, last), "prev")]
    if links:
        resp.headers["Link"] = ", ".join(links)
    return resp
