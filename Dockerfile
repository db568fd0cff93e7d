# syntax=docker/dockerfile:1
# One image for memrepo's integrator: the webhook receiver (the default command,
# `memrepo serve`) and the job workers (`docker run IMAGE worker`), configured by the
# environment. compose.yaml runs both next to Redis; docs/deploy.md says how.

FROM python:3.11.14-slim-bookworm AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY bot ./bot
COPY templates ./templates
COPY localhub ./localhub
COPY webhooks ./webhooks
RUN python -m venv /opt/memrepo \
 && /opt/memrepo/bin/pip install --no-cache-dir /src

FROM python:3.11.14-slim-bookworm
# git: the workers clone, merge and push memory repositories with it. Its version comes with
# the pinned base image's Debian release; a pinned package version would break the build as soon
# as a security update replaces it in Debian's archive.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends git \
 && rm -rf /var/lib/apt/lists/*
RUN useradd --system --uid 10001 --user-group --create-home --home-dir /var/lib/memrepo \
        --shell /usr/sbin/nologin memrepo
COPY --from=build /opt/memrepo /opt/memrepo
ENV PATH=/opt/memrepo/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HOME=/var/lib/memrepo \
    MEMREPO_HOME=/var/lib/memrepo \
    MEMREPO_WORK_DIR=/var/lib/memrepo/work
USER 10001:10001
WORKDIR /var/lib/memrepo
EXPOSE 8080
# The receiver's /healthz answers 200 only when Redis does; compose.yaml gives workers their own check.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=4)"]
ENTRYPOINT ["memrepo"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8080"]
