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
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .
# The package's core dependencies are what the syphon needs (Pulumi and PySpark are extras), each
# pinned here; tests/test_dockerfile.py checks this list against pyproject.toml and against what
# `pairedbus syphon` imports.
RUN python -m venv /opt/venv \
    && /opt/venv/bin/pip install --no-cache-dir \
        aiohttp==3.14.5 \
        azure-identity==1.27.0 \
        azure-mgmt-servicebus==10.0.0 \
        azure-servicebus==7.15.0 \
        prometheus-client==0.26.0 \
        pydantic==2.14.3 \
        pyyaml==6.0.3 \
        rich==15.0.0 \
        /wheels/pairedbus-*.whl

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
