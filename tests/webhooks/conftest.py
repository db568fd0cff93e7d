"""The webhook receiver on this test's Redis, as a Flask app and its test client."""

from __future__ import annotations

import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.webhooks.deliveries import make_settings
from webhooks.intake import create_app


@pytest.fixture
def app(redis_url: str) -> Flask:
    return create_app(make_settings(redis_url))


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()
