"""The agents' event stream: `endpoint.py` serves `GET /v1/repos/<owner>/<repo>/events` (who
may follow, catch-up, heartbeats), `fanout.py` holds the process's one Redis subscription and
hands each head event to every open stream of its repository."""
