"""The receiver process: what `memrepo serve` runs behind the load balancer.

- `receiver.intake`: GitHub's webhooks (`POST /webhooks/github`: verify, de-duplicate,
  route, enqueue or publish, answer) and `GET /healthz`, a Flask application;
- `receiver.streams`: the agents' event stream (`GET /v1/repos/<owner>/<repo>/events`), one
  Redis subscription per process fanned out to every open stream;
- `receiver.asgi`: the two as one ASGI application (`Receiver`), the streams on the event loop
  and the intake on a pool of threads of its own.

The receiver never does work inline and never calls git or GitHub (tests/test_layers.py).
"""
