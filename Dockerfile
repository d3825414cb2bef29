# syntax=docker/dockerfile:1
# The syphon image: `pairedbus syphon` as a non-root service, /healthz and /metrics on 8080.
#
# Base: python:3.11.16-slim-bookworm pinned by its multi-platform OCI index digest, as published
# by the Docker Official Images in docker-library/repo-info
# (repos/python/remote/3.11.16-slim-bookworm.md). Re-pin with
# `docker buildx imagetools inspect python:3.11.16-slim-bookworm` when moving to a newer build.
ARG PYTHON_IMAGE=python:3.11.16-slim-bookworm@sha256:c425d915a89a6dcd3183b1797ad9bd8878caff5a417f6371c8df93c8ea8b727f

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
# Every package that enters the image is checked against a sha256 in a lock scripts/lock writes:
# - requirements-build-lock.txt: the build backend (pyproject.toml's [build-system] requires), installed
#   into a build-only venv; the wheel is built there with --no-build-isolation, so pip never fetches an
#   unhashed setuptools from the index;
# - requirements-syphon-lock.txt: exactly the syphon's runtime, the package's core dependencies and
#   everything they pull in (Pulumi and PySpark are extras, not in it). The wheel then goes in with
#   --no-deps, and `pip check` fails the build if the lock lacks anything the wheel requires.
# tests/test_dockerfile.py and tests/test_hashed_installs.py check both against pyproject.toml.
COPY requirements-build-lock.txt requirements-syphon-lock.txt ./
RUN python -m venv /opt/build \
    && /opt/build/bin/pip install --no-cache-dir --require-hashes -r requirements-build-lock.txt
COPY pyproject.toml README.md ./
COPY src ./src
RUN /opt/build/bin/pip wheel --no-cache-dir --no-build-isolation --no-deps --wheel-dir /wheels .
RUN python -m venv /opt/venv \
    && /opt/venv/bin/pip install --no-cache-dir --require-hashes -r requirements-syphon-lock.txt \
    && /opt/venv/bin/pip install --no-cache-dir --no-deps /wheels/pairedbus-*.whl \
    && /opt/venv/bin/pip check

FROM ${PYTHON_IMAGE} AS runtime
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
RUN groupadd --system --gid 10001 syphon \
    && useradd --system --uid 10001 --gid syphon --create-home --home-dir /home/syphon --shell /usr/sbin/nologin syphon
COPY --from=build /opt/venv /opt/venv
WORKDIR /home/syphon
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["pairedbus", "syphon"]
