# Podium: one image for every tier (migrations, web tier, scoring workers); the GPU worker's image
# adds the hosted baseline systems (torch and friends).
#   docker build -t podium .
#   docker build --build-arg EXTRAS=baselines -t podium-gpu .
# compose.yaml runs both; the commands it runs are tested in tests/app/distributed/.

# --- build stage: a virtual environment holding Podium and its dependencies ---------------------
FROM python:3.11-slim AS build
ARG EXTRAS=""
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential \
 && rm -rf /var/lib/apt/lists/*
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /srv/podium
COPY pyproject.toml README.md alembic.ini ./
COPY alembic ./alembic
COPY app ./app
COPY scorers ./scorers
COPY leaderboard ./leaderboard
COPY baselines ./baselines
COPY examples ./examples
# Installed in place (editable) on purpose: the migrations (alembic/, alembic.ini) live beside the
# packages, where `podium db upgrade` looks for them. The runtime stage keeps the same paths.
RUN pip install --upgrade pip \
 && pip install -e ".${EXTRAS:+[$EXTRAS]}" \
 && python -m compileall -q app scorers leaderboard baselines

# --- runtime stage: the environment and the code, no compiler, run as a user without privileges ---
FROM python:3.11-slim AS runtime
RUN useradd --create-home --uid 10001 --user-group podium
COPY --from=build /opt/venv /opt/venv
COPY --from=build /srv/podium /srv/podium
WORKDIR /srv/podium
# The only folder Podium writes to (the embedded default's SQLite file); the code stays read-only.
RUN mkdir -p /srv/podium/var && chown podium:podium /srv/podium/var
USER podium
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1
EXPOSE 8000
# The web tier answers /healthz without touching the database (/readyz checks database and broker);
# workers replace this check with `podium worker --ping` (compose.yaml).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status != 200)"]
CMD ["podium", "serve", "--host", "0.0.0.0", "--port", "8000"]
