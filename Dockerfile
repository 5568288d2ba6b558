# Podium: one image for every tier (migrations, web tier, scoring workers); the GPU worker's image
# adds the hosted baseline systems (torch and friends) through the EXTRAS build argument.
#   docker build -t podium .
#   docker build --build-arg EXTRAS=baselines -t podium-gpu .
# compose.yaml runs both; the commands it runs are tested in tests/app/distributed/, and
# docker/check.sh builds the image and runs the compose stack end to end.
#
# Reproducible: every package comes at the version constraints.txt pins (pip included). The layers
# up to the dependencies are the same for both variants (EXTRAS is declared only after them), and
# the code is copied last, so a change to the code rebuilds only the last layers.

# --- build stage: a virtual environment holding Podium and its dependencies ---------------------
FROM python:3.11-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential \
 && rm -rf /var/lib/apt/lists/*
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_CONSTRAINT=/srv/podium/constraints.txt
WORKDIR /srv/podium
COPY constraints.txt pyproject.toml ./
COPY docker/requirements.py ./docker/
RUN pip install --upgrade pip \
 && python docker/requirements.py > /tmp/requirements.txt \
 && pip install -r /tmp/requirements.txt
# The one difference between the variants: the extras' own requirements, in a layer of their own.
ARG EXTRAS=""
RUN if [ -n "$EXTRAS" ]; then \
      python docker/requirements.py --extras "$EXTRAS" > /tmp/extras.txt && pip install -r /tmp/extras.txt; \
    fi
COPY README.md alembic.ini ./
COPY alembic ./alembic
COPY app ./app
COPY scorers ./scorers
COPY leaderboard ./leaderboard
COPY baselines ./baselines
COPY sandbox ./sandbox
COPY codalab ./codalab
COPY examples ./examples
COPY docker/healthcheck.py ./docker/
# Installed in place (editable) on purpose: the migrations (alembic/, alembic.ini) live beside the
# packages, where `podium db upgrade` looks for them. The runtime stage keeps the same paths.
RUN pip install --no-deps -e . \
 && python -m compileall -q app scorers leaderboard baselines sandbox codalab

# --- runtime stage: the environment and the code, no compiler, run as a user without privileges ---
FROM python:3.11-slim AS runtime
RUN useradd --create-home --uid 10001 --user-group podium
COPY --from=build /opt/venv /opt/venv
COPY --from=build /srv/podium /srv/podium
WORKDIR /srv/podium
RUN mkdir -p /srv/podium/var && chown podium:podium /srv/podium/var
# The only folder Podium writes to: the embedded default's SQLite file (sqlite:///var/podium.sqlite3,
# relative to /srv/podium). A volume, so that the database outlives the container; a volume mounted
# there must be writable by uid 10001 (a new named volume takes this folder's owner). matplotlib
# keeps its cache there too, so the root file system can be mounted read-only.
VOLUME /srv/podium/var
USER podium
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    MPLCONFIGDIR=/srv/podium/var/matplotlib
EXPOSE 8000
# One check for every role (docker/healthcheck.py): the web tier answers /healthz (without touching
# the database; /readyz checks database and broker), a worker answers `podium worker --ping`, and a
# one-shot command (`podium db upgrade`) has nothing to probe.
HEALTHCHECK --interval=30s --timeout=20s --start-period=30s --retries=3 \
  CMD ["python", "/srv/podium/docker/healthcheck.py"]
CMD ["podium", "serve", "--host", "0.0.0.0", "--port", "8000"]
