"""The integrator's container image and services, checked without a container engine: hadolint
finds nothing in the Dockerfile; the image is pinned, runs as a non-root user and serves
`memrepo serve`; compose.yaml runs a receiver, scalable workers and Redis, each with a health
check, with commands the CLI accepts and no secret in the file; the health checks themselves,
run here against a real receiver and a real Redis, pass when the service is up and fail when it
is not; and .dockerignore lets in what the build copies and keeps out keys and local settings."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import rq
import yaml

from bot.cli import command_parser
from bot.errors import MemrepoError
from bot.settings import APP_KEY_FILE, REDIS_URL, Settings
from bot.sockets import free_port
from tests.conftest import git
from tests.served import SERVICE_ENV

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
COMPOSE = ROOT / "compose.yaml"
PALACE_COMPOSE = ROOT / "compose.palace.yaml"
DOCKERIGNORE = ROOT / ".dockerignore"
SECRETS = ("MEMREPO_WEBHOOK_SECRET", "MEMREPO_AGENT_TOKEN", "MEMREPO_APP_PRIVATE_KEY", "MEMREPO_GITHUB_TOKEN",
           "MEMREPO_FORGE_TOKEN", "GITHUB_TOKEN", "MEMREPO_LLM_API_KEY", "OPENAI_API_KEY")
PINNED_IMAGE = re.compile(r"^[\w./-]+(:\d+\.\d+\.\d+[\w.-]*)?(@sha256:[0-9a-f]{64})?$")


# ------------------------------------------------------------------------ the Dockerfile

def instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions as (KEYWORD, arguments), continuation lines joined."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text(encoding="utf-8"))
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            found.append((keyword.upper(), rest.strip()))
    return found


def only(keyword: str) -> list[str]:
    return [rest for kw, rest in instructions() if kw == keyword]


def final_stage() -> list[tuple[str, str]]:
    steps = instructions()
    last_from = max(i for i, (kw, _) in enumerate(steps) if kw == "FROM")
    return steps[last_from:]


def hadolint(path: Path, tmp_path: Path, *extra: str) -> list[dict[str, Any]]:
    """hadolint's findings at every level, under an empty configuration (none of the user's)."""
    config = tmp_path / "hadolint.yaml"
    config.write_text("{}\n", encoding="utf-8")
    binary = Path(sysconfig.get_path("scripts")) / "hadolint"
    assert binary.is_file(), "hadolint is missing: pip install -e '.[test]'"
    done = subprocess.run([str(binary), "--config", str(config), "--failure-threshold", "style",
                           "--format", "json", *extra, str(path)], capture_output=True, text=True, timeout=60)
    findings = json.loads(done.stdout or "[]")
    assert (done.returncode == 0) == (findings == []), done.stderr
    return findings


def test_hadolint_finds_nothing_in_the_dockerfile(tmp_path: Path) -> None:
    assert hadolint(DOCKERFILE, tmp_path) == []


def test_hadolint_ignores_one_rule_and_says_why(tmp_path: Path) -> None:
    """The one rule set aside (DL3008: a Debian package version pinned in apt-get) comes with its
    reason; with every ignore pragma disabled it is the only finding."""
    text = DOCKERFILE.read_text(encoding="utf-8")
    assert re.findall(r"hadolint ignore=(\S+)", text) == ["DL3008"]
    assert "security update" in text
    assert {f["code"] for f in hadolint(DOCKERFILE, tmp_path, "--disable-ignore-pragma")} == {"DL3008"}


def test_hadolint_as_run_here_flags_a_careless_dockerfile(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python:latest\nRUN pip install memrepo\nCMD memrepo serve\n", encoding="utf-8")
    assert {"DL3007", "DL3013", "DL3042", "DL3025"} <= {f["code"] for f in hadolint(bad, tmp_path)}


def test_every_base_image_is_pinned() -> None:
    for base in only("FROM"):
        image = base.split()[0]
        assert PINNED_IMAGE.match(image) and (":" in image or "@" in image), image


def test_the_image_runs_as_a_non_root_user_it_creates() -> None:
    final = final_stage()
    users = [rest for kw, rest in final if kw == "USER"]
    assert users, "no USER in the final stage"
    uid, _, gid = users[-1].partition(":")
    assert uid.isdigit() and int(uid) > 0 and (not gid or int(gid) > 0), users[-1]
    created = " ".join(rest for kw, rest in final if kw == "RUN")
    assert re.search(rf"useradd [^&]*--uid {uid}\b", created), "the USER is not created in the image"
    keywords = [kw for kw, _ in final]
    assert keywords.index("USER") < keywords.index("ENTRYPOINT")
    assert "RUN" not in keywords[keywords.index("USER"):]


def exec_form(keyword: str) -> list[str]:
    (value,) = only(keyword)
    parsed = json.loads(value)
    assert isinstance(parsed, list), f"{keyword} is not in exec form"
    return parsed


def test_the_image_serves_memrepo_serve_and_runs_workers_by_name() -> None:
    """ENTRYPOINT memrepo, CMD a serve the CLI accepts: `docker run IMAGE worker` is a worker."""
    assert exec_form("ENTRYPOINT") == ["memrepo"]
    cmd = exec_form("CMD")
    assert cmd[0] == "serve"
    args = command_parser("serve").parse_args(cmd[1:])
    assert (args.local, args.host, args.port) == (False, "0.0.0.0", 8080)
    assert "8080" in only("EXPOSE")[0].split()


def dockerfile_healthcheck() -> list[str]:
    (value,) = only("HEALTHCHECK")
    options, _, command = value.partition("CMD ")
    assert "--interval=" in options and "--timeout=" in options
    return json.loads(command)


def test_the_image_health_check_asks_healthz_on_the_served_port() -> None:
    check = dockerfile_healthcheck()
    assert check[:2] == ["python", "-c"]
    assert "http://127.0.0.1:8080/healthz" in check[2]
    assert check == compose()["services"]["receiver"]["healthcheck"]["test"][1:]  # compose states the same


# ------------------------------------------------------------------------- compose.yaml

def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))


def test_compose_runs_a_receiver_workers_and_redis_each_with_a_health_check() -> None:
    services = compose()["services"]
    assert set(services) == {"receiver", "worker", "redis"}
    for name, service in services.items():
        test = service["healthcheck"]["test"]
        assert test[0] in ("CMD", "CMD-SHELL") and len(test) > 1, name
        assert service["healthcheck"].get("disable") is not True, name
    assert "redis-cli ping" in " ".join(services["redis"]["healthcheck"]["test"])
    assert PINNED_IMAGE.match(services["redis"]["image"]) and ":" in services["redis"]["image"]


def test_compose_builds_one_image_for_receiver_and_workers() -> None:
    services = compose()["services"]
    receiver, worker = services["receiver"], services["worker"]
    assert receiver["build"] == worker["build"] == "."
    assert receiver["image"] == worker["image"]


def test_compose_starts_them_once_redis_is_healthy_and_never_as_root() -> None:
    services = compose()["services"]
    (dockerfile_user,) = [rest for kw, rest in final_stage() if kw == "USER"]
    for name in ("receiver", "worker"):
        service = services[name]
        assert service["depends_on"] == {"redis": {"condition": "service_healthy"}}, name
        assert service["user"] == dockerfile_user, name
        assert service["cap_drop"] == ["ALL"], name
        assert "no-new-privileges:true" in service["security_opt"], name


def test_compose_workers_scale() -> None:
    worker = compose()["services"]["worker"]
    assert "container_name" not in worker and "ports" not in worker and "hostname" not in worker
    assert worker["deploy"]["replicas"] >= 2


def test_compose_keeps_secrets_out_of_the_file() -> None:
    document = compose()
    for name in ("receiver", "worker"):
        service = document["services"][name]
        assert service["env_file"] == "memrepo.env", name
        assert not set(service["environment"]) & set(SECRETS), name
        assert service["environment"][REDIS_URL] == "redis://redis:6379/0", name
    assert set(document["services"]["receiver"]["environment"]) == {REDIS_URL}
    worker = document["services"]["worker"]
    assert set(worker["environment"]) == {REDIS_URL, APP_KEY_FILE}
    assert worker["secrets"] == ["app_private_key"]
    assert worker["environment"][APP_KEY_FILE] == "/run/secrets/app_private_key"
    assert "secrets" not in document["services"]["receiver"]  # the receiver never holds the App's key
    assert interpolate(document["secrets"]["app_private_key"]["file"], {}) == "./secrets/app.pem"


def test_the_palace_file_gives_the_receiver_the_apps_key_as_the_workers_have_it_and_nothing_else() -> None:
    base, palace = compose(), yaml.safe_load(PALACE_COMPOSE.read_text(encoding="utf-8"))
    worker = base["services"]["worker"]
    assert palace == {"services": {"receiver": {"environment": {APP_KEY_FILE: worker["environment"][APP_KEY_FILE]},
                                                "secrets": worker["secrets"]}}}
    assert set(worker["secrets"]) <= set(base["secrets"])  # the secret it names is the base file's


def test_with_the_palace_file_the_receiver_serves_palaces_and_without_it_says_it_does_not(tmp_path: Path) -> None:
    """The receiver's environment as compose merges it (the key file where the secret is mounted,
    here a file of the test's), read by `memrepo serve`'s own start-up."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    from bot.serve.palace import from_env

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = tmp_path / "app.pem"
    pem.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                      serialization.NoEncryption()))
    memrepo_env = {"MEMREPO_APP_ID": "123456", "MEMREPO_WEBHOOK_SECRET": "s3cret", "MEMREPO_WORK_DIR": str(tmp_path)}
    receiver = compose()["services"]["receiver"]["environment"]
    merged = {**receiver, **yaml.safe_load(PALACE_COMPOSE.read_text(encoding="utf-8"))["services"]["receiver"][
        "environment"]}
    settings = Settings(redis_url=receiver[REDIS_URL], webhook_secret="s3cret", agent_token="operator")
    assert from_env(settings, None, {**memrepo_env, **receiver}) is None
    served = from_env(settings, None, {**memrepo_env, **merged, APP_KEY_FILE: str(pem)})
    assert served is not None
    # the secret given but not readable (not mounted, or not readable by uid 10001): said at start
    with pytest.raises(MemrepoError, match="MEMREPO_APP_PRIVATE_KEY_FILE"):
        from_env(settings, None, {**memrepo_env, **merged, APP_KEY_FILE: str(tmp_path / "missing.pem")})


def help_flags(command: str) -> set[str]:
    """The long options `memrepo COMMAND --help` lists, asked of the installed command."""
    binary = Path(sysconfig.get_path("scripts")) / "memrepo"
    done = subprocess.run([str(binary), command, "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", done.stdout))


@pytest.mark.parametrize("service", ["receiver", "worker"])
def test_compose_commands_are_memrepo_commands_with_flags_it_accepts(service: str) -> None:
    command = compose()["services"][service]["command"]
    name, args = command[0], command[1:]
    assert name == {"receiver": "serve", "worker": "worker"}[service]
    flags = {arg for arg in args if arg.startswith("--")}
    assert flags and flags <= help_flags(name), flags - help_flags(name)
    parsed = command_parser(name).parse_args(args)  # and their values parse
    if name == "serve":
        assert not parsed.local and parsed.host == "0.0.0.0"
        assert compose()["services"]["receiver"]["ports"] == [f"127.0.0.1:{parsed.port}:{parsed.port}"]


def test_the_deploy_page_names_the_files_compose_reads() -> None:
    deploy = (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
    for needle in ("memrepo.env", "secrets/app.pem", "--scale worker=", "templates/github-app/manifest.json",
                   "docker compose up", "compose.palace.yaml", "memrepo.env.example", "MEMREPO_APP_KEY_PATH=/dev/null"):
        assert needle in deploy, needle


# ----------------------------------------------------- token mode and the example settings
COMPOSE_VARIABLE = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>[^}]*))?\}")


def interpolate(text: str, variables: dict[str, str]) -> str:
    """`${NAME}` and `${NAME:-default}` as compose reads them (docs.docker.com/reference/compose-file/
    interpolation: the default when NAME is unset or empty)."""
    return COMPOSE_VARIABLE.sub(lambda m: variables.get(m["name"]) or (m["default"] or ""), text)


def env_file(text: str) -> dict[str, str]:
    """An env_file as compose reads it: NAME=VALUE lines, `#` lines are comments."""
    return dict(line.split("=", 1) for line in text.splitlines() if line.strip() and not line.startswith("#"))


def test_compose_in_token_mode_mounts_no_app_key_and_the_workers_act_with_the_token(tmp_path: Path) -> None:
    from bot.integrator.context import TokenCredentials, credentials_from_env

    key_file = compose()["secrets"]["app_private_key"]["file"]
    mounted = interpolate(key_file, {"MEMREPO_APP_KEY_PATH": "/dev/null"})  # .env, as docs/deploy.md says
    assert mounted == "/dev/null" and Path(mounted).exists()  # the mount's source exists, so compose starts
    settings = env_file((ROOT / "memrepo.env.example").read_text(encoding="utf-8"))
    settings.update(MEMREPO_WEBHOOK_SECRET="s3cret", MEMREPO_AGENT_TOKEN="operator", MEMREPO_GITHUB_TOKEN="ghp_x")
    worker = {**settings, **compose()["services"]["worker"]["environment"], APP_KEY_FILE: mounted}
    credentials = credentials_from_env(worker)
    assert isinstance(credentials, TokenCredentials) and credentials.token == "ghp_x"


def test_the_example_settings_name_every_setting_the_integrator_reads() -> None:
    from bot import settings

    text = (ROOT / "memrepo.env.example").read_text(encoding="utf-8")
    named = set(re.findall(r"^#? ?([A-Z][A-Z0-9_]+)=", text, re.MULTILINE))
    constants = [value for name, value in vars(settings).items() if name.isupper()]
    names = [n for c in constants for n in (c if isinstance(c, tuple) else (c,)) if isinstance(n, str)]
    read = {n for n in names if re.fullmatch(r"(MEMREPO_|REDIS_)[A-Z_]+|GITHUB_TOKEN|OPENAI_API_KEY", n)}
    # read by other commands, not by the receiver or the workers
    others = {"MEMREPO_REVIEW_TOKEN": "memrepo review", "MEMREPO_FORGE_API_URL": "an agent's clone",
              "MEMREPO_PALACE_TOKEN": "memrepo palace"}
    assert sorted(read - set(others) - named) == []
    assert env_file(text).keys() <= {"MEMREPO_WEBHOOK_SECRET", "MEMREPO_AGENT_TOKEN", "MEMREPO_APP_ID"}  # no value set
    assert not any(env_file(text).values())


# ----------------------------------------------------- the health checks, run for real


def run_check(command: list[str], env: dict[str, str]) -> int:
    """A compose or image health check in exec form (`python -c ...`), run with this Python."""
    assert command[:2] == ["python", "-c"]
    return subprocess.run([sys.executable, "-c", command[2]], env=env, capture_output=True,
                          timeout=30).returncode


@pytest.fixture
def receiver(redis_url: str) -> Iterator[int]:
    """`memrepo serve` in production mode on a free port, with a real Redis."""
    env = {k: v for k, v in os.environ.items() if k not in SERVICE_ENV}
    env.update({"REDIS_URL": redis_url, "MEMREPO_WEBHOOK_SECRET": "s3cret", "MEMREPO_AGENT_TOKEN": "agent"})
    process = subprocess.Popen([sys.executable, "-m", "bot.cli", "serve", "--port", "0", "--workers", "1"],
                               cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # printed once the socket listens
        match = re.search(r"http://127\.0\.0\.1:(\d+)/webhooks/github", line)
        assert match, line
        yield int(match.group(1))
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_the_receiver_health_check_passes_on_a_live_receiver_and_fails_without_one(receiver: int) -> None:
    check = dockerfile_healthcheck()
    pointed = [*check[:2], check[2].replace("127.0.0.1:8080/", f"127.0.0.1:{receiver}/")]
    assert pointed != check
    assert run_check(pointed, dict(os.environ)) == 0
    nobody = [*check[:2], check[2].replace("127.0.0.1:8080/", f"127.0.0.1:{free_port()}/")]
    assert run_check(nobody, dict(os.environ)) != 0


def test_the_worker_health_check_passes_while_a_worker_of_this_host_is_registered(redis_url: str) -> None:
    check = compose()["services"]["worker"]["healthcheck"]["test"][1:]
    env = dict(os.environ, REDIS_URL=redis_url)
    assert run_check(check, env) != 0  # no worker yet
    connection = redis.Redis.from_url(redis_url)
    worker = rq.Worker(["memrepo-health-test"], connection=connection)
    worker.register_birth()
    try:
        assert run_check(check, env) == 0
    finally:
        worker.register_death()
    assert run_check(check, env) != 0
    connection.close()


def test_the_redis_health_check_is_one_redis_answers() -> None:
    test = compose()["services"]["redis"]["healthcheck"]["test"]
    assert test[0] == "CMD-SHELL"
    assert shlex.split(test[1]) == ["redis-cli", "ping", "|", "grep", "-q", "PONG"]


# ------------------------------------------------------------------------ .dockerignore

def glob_regex(pattern: str) -> re.Pattern[str]:
    """A .dockerignore pattern as Docker reads it: `*` and `?` within one path element, `**`
    across any number of them."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out)


def ignored(path: str, patterns: list[str]) -> bool:
    """Whether the build context leaves `path` out: the last pattern matching it, or a folder
    above it, decides; `!` lets it back in."""
    parts = path.split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    verdict = False
    for pattern in patterns:
        negate = pattern.startswith("!")
        regex = glob_regex(pattern.removeprefix("!").strip("/"))
        if any(regex.fullmatch(candidate) for candidate in candidates):
            verdict = not negate
    return verdict


def dockerignore() -> list[str]:
    lines = DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def test_dockerignore_lets_in_every_file_the_build_copies() -> None:
    patterns = dockerignore()
    sources = [src for rest in only("COPY") if not rest.startswith("--from")
               for src in rest.split()[:-1]]
    assert sources
    tracked = git(ROOT, "ls-files").split()
    for source in sources:
        files = [f for f in tracked if f == source or f.startswith(source.rstrip("/") + "/")]
        assert files, source
        assert not [f for f in files if ignored(f, patterns)], source


def test_dockerignore_keeps_out_keys_settings_and_everything_else() -> None:
    patterns = dockerignore()
    for path in ("memrepo.env", "secrets/app.pem", ".git/config", ".venv/bin/python", "tests/serve/test_serve.py",
                 "bench/RESULTS.md", ".github/workflows/ci.yml", "bot/__pycache__/cli.cpython-311.pyc",
                 "bot/memfs/__pycache__/x.pyc", "Dockerfile", "compose.yaml"):
        assert ignored(path, patterns), path
    for path in ("bot/cli.py", "templates/memory/.memrepo/config.yml", "pyproject.toml", "README.md"):
        assert not ignored(path, patterns), path
