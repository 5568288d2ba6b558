# Podium: one image for every tier (migrations, web tier, scoring workers, the worker of the fast
# hosted baselines); the GPU worker's image adds the MiniLM baselines (torch with CUDA and friends)
# through the EXTRAS build argument.
#   docker build -t podium .
#   docker build --build-arg EXTRAS=baselines -t podium-gpu .
# compose.yaml runs both; the commands it runs are tested in tests/app/distributed/, and
# docker/check.sh builds the image and runs the compose stack end to end.
#
# Reproducible: every package comes at the version constraints.txt pins (pip included); the CUDA
# libraries that the GPU build of torch adds (a CPU installation, which makes constraints.txt, has
# none) at the versions of constraints-gpu.txt (docker/gpu_constraints.py writes it).
# Layers: the dependencies every tier needs are one layer, the same in both variants (so a host that
# pulls both downloads it once); the GPU variant adds its extras on top in a layer of its own (EXTRAS
# is declared only after the shared layers), and the code is copied last, so a change to the code
# rebuilds only the last layers.

# --- build stage: a virtual environment holding the dependencies every tier needs ---------------
# (and the fast hosted baselines, `baselines-light`: a few MB, so the default image runs them)
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
 && { python docker/requirements.py && python docker/requirements.py --extras baselines-light; } > /tmp/requirements.txt \
 && pip install -r /tmp/requirements.txt

# --- runtime stage: the environment and the code, no compiler, run as a user without privileges ---
FROM python:3.11-slim AS runtime
# bubblewrap: the sandbox that scoring programs (and participants' code) run in (sandbox/bwrap.py), as
# uid 10001 through a user namespace; compose.yaml gives the workers the seccomp profile and the /proc
# it needs (docker/README.md). setpriv and prlimit come with util-linux, which every Debian has.
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap \
 && apt-get clean && rm -rf /var/lib/apt/lists/*
RUN useradd --create-home --uid 10001 --user-group podium
# The shared dependency layer: the whole environment of the build stage, the same for both variants.
COPY --from=build /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_CONSTRAINT="/srv/podium/constraints.txt /srv/podium/constraints-gpu.txt"
WORKDIR /srv/podium
COPY constraints.txt constraints-gpu.txt pyproject.toml ./
COPY docker/requirements.py ./docker/
# The one difference between the variants: the extras' own requirements, in a layer of their own on
# top of the shared one (wheels only: no compiler here). Without EXTRAS this layer is empty.
ARG EXTRAS=""
RUN if [ -n "$EXTRAS" ]; then \
      python docker/requirements.py --extras "$EXTRAS" > /tmp/extras.txt \
      && pip install --only-binary=:all: -r /tmp/extras.txt && rm /tmp/extras.txt; \
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
COPY docker/healthcheck.py docker/entrypoint.py ./docker/
# Installed in place (editable) on purpose: the migrations (alembic/, alembic.ini) live beside the
# packages, where `podium db upgrade` looks for them.
RUN pip install --no-deps -e . \
 && python -m compileall -q app scorers leaderboard baselines sandbox codalab \
 && mkdir -p /srv/podium/var && chown podium:podium /srv/podium/var
# The only folder Podium writes to: the embedded default's SQLite file (sqlite:///var/podium.sqlite3,
# relative to /srv/podium). A volume, so that the database outlives the container; a volume mounted
# there must be writable by uid 10001 (a new named volume takes this folder's owner; the entry point
# stops with the `chown` to run when it is not). matplotlib keeps its cache there too, so the root
# file system can be mounted read-only.
VOLUME /srv/podium/var
USER podium
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    MPLCONFIGDIR=/srv/podium/var/matplotlib
EXPOSE 8000
# One check for every role (docker/healthcheck.py): the web tier answers /healthz (without touching
# the database; /readyz checks database and broker), a worker answers `podium worker --ping`, and a
# one-shot command (`podium db upgrade`) has nothing to probe.
HEALTHCHECK --interval=30s --timeout=20s --start-period=30s --retries=3 \
  CMD ["python", "/srv/podium/docker/healthcheck.py"]
# Before the command: the checks that would otherwise fail late or quietly (docker/entrypoint.py):
# the web tier without PODIUM_SECRET_KEY, a data folder that uid 10001 cannot write.
ENTRYPOINT ["python", "/srv/podium/docker/entrypoint.py"]
CMD ["podium", "serve", "--host", "0.0.0.0", "--port", "8000"]
