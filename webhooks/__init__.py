"""What the receiver process runs (`memrepo serve`, behind the load balancer; bot/serve/receiver.py builds it):

- `webhooks.intake`: GitHub's webhooks (`POST /webhooks/github`: verify, de-duplicate,
  route, enqueue or publish, answer) and `GET /healthz`, a Flask application;
- `webhooks.streams`: the agents' event stream (`GET /v1/repos/<owner>/<repo>/events`), one
  Redis subscription per process fanned out to every open stream;
- `webhooks.asgi`: the two as one ASGI application (`Receiver`), the streams on the event loop
  and the intake on a pool of threads of its own.

The receiver never does work inline and never calls git or GitHub (tests/house/test_layers.py).
"""
