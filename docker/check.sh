#!/usr/bin/env bash
# End-to-end check of the Dockerfile and compose.yaml: build the image, start the compose stack
# (PostgreSQL, Redis, migrations, the web tier, two scoring workers, the baseline worker) under a
# project name of its own, wait until every service is healthy, seed the demo and wait until the
# baseline worker has run every hosted baseline (none in the web tier), upload a submission to the
# web tier's published port and wait until a worker has scored it; import a Codabench bundle with a
# scoring program over the API and wait until a worker has scored a result submission with it in
# bubblewrap's sandbox (the numbers its program prints); submit the starting kit of the demo's code
# phase (svident-code) as a program and wait until the baseline worker (the gpu queue) has run it in its
# sandbox on the hidden inputs and a worker has scored its predictions; then restart the workers and
# check that the stack scores the next upload too. Last, the embedded default in one container
# (read-only root, its SQLite file and matplotlib's cache in a volume; without PODIUM_SECRET_KEY
# and on a folder uid 10001 cannot write, it refuses to start). Everything it started is removed at
# the end.
#
#   docker/check.sh              # the image without extras
#   GPU=1 docker/check.sh        # also build the GPU worker's image (EXTRAS=baselines, several GB)
#
# Base images: python:3.11-slim, postgres:15 and redis:7 are pulled when missing; on a machine that
# cannot reach a registry, docker/base-images.sh builds local stand-ins from Debian's packages
# (LOCAL_BASES=1 runs it here when one is missing). Prints the image sizes and the timings at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

if docker compose version >/dev/null 2>&1; then
    compose_cmd=(docker compose)
elif command -v docker-compose >/dev/null; then
    compose_cmd=(docker-compose)
else
    echo "neither 'docker compose' nor 'docker-compose' is installed" >&2
    exit 1
fi
docker info >/dev/null 2>&1 || { echo "the Docker engine does not answer ('docker info' failed)" >&2; exit 1; }

project="podium-check-$$"
export COMPOSE_PROJECT_NAME="$project"
export PODIUM_SECRET_KEY="${PODIUM_SECRET_KEY:-$(python3 -c 'import secrets; print(secrets.token_hex(32))')}"
export PODIUM_DB_PASSWORD="${PODIUM_DB_PASSWORD:-$(python3 -c 'import secrets; print(secrets.token_hex(16))')}"
export PODIUM_PORT="${PODIUM_PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
# The Codabench bundle whose scoring program the workers run (numpy and scikit-learn: the image has both).
bundle="${PODIUM_SHARED_DIR:-../shared}/reference/codabench/competition_v2_multi_task.zip"
[ -f "$bundle" ] || { echo "no Codabench bundle at $bundle (set PODIUM_SHARED_DIR to the shared folder)" >&2; exit 1; }
# A container gets no cgroup of its own for each run on a cgroup v1 host, nor on v2 without writable
# cgroups (docker/README.md): unless told otherwise, the check lets programs run with the per-process
# limits alone; PODIUM_SANDBOX_ALLOW_NO_CGROUP=false checks a host that delegates cgroups.
export PODIUM_SANDBOX_ALLOW_NO_CGROUP="${PODIUM_SANDBOX_ALLOW_NO_CGROUP:-true}"
compose() { "${compose_cmd[@]}" -f compose.yaml "$@"; }
say() { printf '[%s] %s\n' "$(date +%T)" "$*"; }
started=$(date +%s)

# --- base images ------------------------------------------------------------------------------
missing=()
for image in python:3.11-slim postgres:15 redis:7; do
    docker image inspect "$image" >/dev/null 2>&1 || docker pull -q "$image" >/dev/null 2>&1 || missing+=("$image")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ -n "${LOCAL_BASES:-}" ]; then
        say "no registry for ${missing[*]}: building local stand-ins (docker/base-images.sh)"
        docker/base-images.sh
    else
        echo "missing base images and no registry: ${missing[*]}; run docker/base-images.sh (or LOCAL_BASES=1 $0)" >&2
        exit 1
    fi
fi

# --- images -----------------------------------------------------------------------------------
# The host's network for the build: it runs apt-get and pip, and works also where the engine has
# no NAT for its bridge.
say "docker build -t podium ."
t0=$(date +%s)
docker build --network host -t podium . >/tmp/"$project"-build.log 2>&1 || { tail -40 /tmp/"$project"-build.log; exit 1; }
build_s=$(( $(date +%s) - t0 ))
if [ -n "${GPU:-}" ]; then
    say "docker build --build-arg EXTRAS=baselines -t podium-gpu ."
    t0=$(date +%s)
    docker build --network host --build-arg EXTRAS=baselines -t podium-gpu . >>/tmp/"$project"-build.log 2>&1 \
        || { tail -40 /tmp/"$project"-build.log; exit 1; }
    gpu_build_s=$(( $(date +%s) - t0 ))
fi
rm -f /tmp/"$project"-build.log

# --- the stack --------------------------------------------------------------------------------
cleanup() {
    status=$?
    if [ $status -ne 0 ]; then
        compose ps || true
        compose logs --tail 60 || true
    fi
    compose down --volumes --remove-orphans >/dev/null 2>&1 || true
    exit $status
}
trap cleanup EXIT

say "compose up (project $project, web tier on 127.0.0.1:$PODIUM_PORT)"
t0=$(date +%s)
if [ "${compose_cmd[0]}" = docker-compose ]; then
    # Compose v1 hands security_opt to the engine as it is, and the engine refuses
    # systempaths=unconfined (the Docker CLI and Compose v2 turn it into an unmasked /proc themselves,
    # which v1 cannot): with v1 the workers' containers are started by `docker run`, with what
    # `compose config` resolves for them (their named volumes under the project's prefix, as compose
    # names them: the disk store's files are in one) and the labels compose finds them by (ps, restart,
    # logs, down).
    compose up -d --no-build web >/dev/null
    CONFIG="$(compose config)" python3 - "$project" <<'PY'
import os, subprocess, sys, yaml
project, services = sys.argv[1], yaml.safe_load(os.environ["CONFIG"])["services"]
def volume(spec):  # "files:/srv/podium/var:rw" names the project's volume; a path is a bind
    source, _, rest = spec.partition(":")
    return spec if source.startswith(("/", ".")) else f"{project}_{source}:{rest}"
for name, count in (("worker", 2), ("baseline-worker", 1)):
    service = services[name]
    for number in range(1, count + 1):
        labels = {"project": project, "service": name, "oneoff": "False", "container-number": number}
        subprocess.run(
            ["docker", "run", "-d", f"--name={project}_{name}_{number}", f"--network={project}_default",
             f"--network-alias={name}", f"--restart={service.get('restart', 'no')}"]
            + [f"--label=com.docker.compose.{key}={value}" for key, value in labels.items()]
            + [f"--env={key}={value}" for key, value in service["environment"].items()]
            + (["--read-only"] if service.get("read_only") else []) + [f"--tmpfs={t}" for t in service.get("tmpfs", [])]
            + [f"--volume={volume(spec)}" for spec in service.get("volumes", [])]
            + [f"--security-opt={option}" for option in service.get("security_opt", [])]
            + [service["image"], *service["command"]],
            check=True, stdout=subprocess.DEVNULL)
PY
else
    compose up -d --no-build --scale worker=2 >/dev/null
fi

health() { docker inspect --format '{{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}}' "$1"; }
wait_healthy() {  # SERVICE COUNT TIMEOUT: COUNT containers of SERVICE healthy within TIMEOUT seconds
    local deadline=$(( $(date +%s) + $3 )) ids
    while :; do
        mapfile -t ids < <(compose ps -q "$1")
        local healthy=0
        for id in "${ids[@]}"; do [ "$(health "$id")" = healthy ] && healthy=$((healthy + 1)); done
        [ "$healthy" -ge "$2" ] && return 0
        [ "$(date +%s)" -gt "$deadline" ] && { echo "$1: $healthy of $2 healthy after $3 s" >&2; return 1; }
        sleep 2
    done
}
wait_healthy web 1 240
wait_healthy worker 2 240
wait_healthy baseline-worker 1 240
# A one-shot service that ended: `ps -a` (Compose v2 leaves exited containers out of plain `ps`).
migrate_id=$(compose ps -a -q migrate)
[ -n "$migrate_id" ] || { echo "no container of the migration step" >&2; exit 1; }
[ "$(docker inspect --format '{{.State.ExitCode}}' "$migrate_id")" = 0 ] || { echo "the migration step failed" >&2; exit 1; }
up_s=$(( $(date +%s) - t0 ))
say "healthy: web, 2 workers, the baseline worker (migrations done) after ${up_s} s"

# The web tier runs as uid 10001 on a read-only root; its health check is /healthz, a worker's a ping.
web_id=$(compose ps -q web)
[ "$(docker exec "$web_id" id -u)" = 10001 ] || { echo "the web tier does not run as uid 10001" >&2; exit 1; }
[ "$(docker inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$web_id")" = true ] || { echo "root not read-only" >&2; exit 1; }

# --- a submission, scored by a worker ---------------------------------------------------------
# --no-wait: the demo only queues the hosted baselines' runs; the sweepers send them to the gpu
# queue, which the baseline worker takes (with the default image's baselines-light).
demo=$(compose exec -T web podium demo --no-wait)
token=$(awk '$1 == "participant" {print $NF}' <<<"$demo")
participant=$(awk '$1 == "participant" {print $3}' <<<"$demo")
organizer_token=$(awk '$1 == "organizer" {print $NF}' <<<"$demo")
[ -n "$token" ] && [ -n "$organizer_token" ] || { echo "podium demo printed no participant or organizer token" >&2; exit 1; }
baseline_host=$(compose ps -q baseline-worker | cut -c1-12)
say "the demo's hosted baselines, on the baseline worker ($baseline_host)"
compose exec -T -e BASELINE_HOST="$baseline_host" web python - <<'PY'
import os, sys, time
from sqlalchemy import create_engine, text
engine = create_engine(os.environ["PODIUM_DATABASE_URL"])
deadline = time.monotonic() + 600
while True:
    with engine.connect() as connection:
        runs = connection.execute(text("SELECT baseline, status, worker, error FROM baseline_runs")).all()
    if runs and all(run.status not in ("queued", "running") for run in runs) or time.monotonic() > deadline:
        break
    time.sleep(2)
bad = [run for run in runs if run.status != "succeeded" or not (run.worker or "").startswith(os.environ["BASELINE_HOST"])]
for run in bad:
    print(f"{run.baseline}: {run.status} on {run.worker}: {(run.error or '').strip().splitlines()[-1:]}")
print(f"{len(runs) - len(bad)} of {len(runs)} baseline runs succeeded on the baseline worker")
sys.exit(1 if bad or not runs else 0)
PY
submit_and_wait() {  # an SV-Ident detection run of the example data, uploaded and polled until scored
    PODIUM_URL="http://127.0.0.1:$PODIUM_PORT" TOKEN="$token" python3 - <<'PY'
import csv, json, os, sys, time, urllib.request, uuid
base, token = os.environ["PODIUM_URL"], os.environ["TOKEN"]
rows = csv.DictReader(open("examples/svident/data/test.tsv", encoding="utf-8"), delimiter="\t")
run = json.dumps({r["uuid"]: r["is_variable"] for r in rows}).encode()
boundary = uuid.uuid4().hex
body = (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="run.json"\r\n'
        f"Content-Type: application/json\r\n\r\n").encode() + run + f"\r\n--{boundary}--\r\n".encode()
auth = {"Authorization": f"Bearer {token}"}
request = urllib.request.Request(
    f"{base}/api/v1/competitions/svident/tasks/detection/phases/test/submissions", data=body, method="POST",
    headers={**auth, "Content-Type": f"multipart/form-data; boundary={boundary}"})
with urllib.request.urlopen(request, timeout=60) as answer:
    submission = json.load(answer)
deadline = time.monotonic() + 120
while submission["status"] not in ("scored", "failed") and time.monotonic() < deadline:
    time.sleep(0.5)
    with urllib.request.urlopen(urllib.request.Request(f"{base}/api/v1/submissions/{submission['id']}", headers=auth)) as answer:
        submission = json.load(answer)
print(f"submission {submission['id']}: {submission['status']} {submission.get('metrics')}")
sys.exit(0 if submission["status"] == "scored" and submission.get("metrics") else 1)
PY
}
t0=$(date +%s)
submit_and_wait
first_s=$(( $(date +%s) - t0 ))

# --- a scoring program, run by a worker in bubblewrap's sandbox -------------------------------
# Each worker says at start whether programs can run in its container (docker/entrypoint.py); the
# baseline worker runs the code submissions (the gpu queue), the others the scoring programs.
for id in $(compose ps -q worker) $(compose ps -q baseline-worker); do
    line=$(docker logs "$id" 2>&1 | grep -m1 '^sandbox: ' || true)
    say "worker ${id:0:12}: ${line:-no sandbox line in its log}"
    case "$line" in "sandbox: ready"*) ;; *) echo "the worker cannot run scoring programs" >&2; exit 1 ;; esac
done
say "a Codabench bundle with a scoring program ($(basename "$bundle")), imported over the API"
t0=$(date +%s)
PODIUM_URL="http://127.0.0.1:$PODIUM_PORT" TOKEN="$token" ORGANIZER="$organizer_token" PARTICIPANT="$participant" \
    BUNDLE="$bundle" python3 - <<'PY'
import io, json, os, sys, time, urllib.error, urllib.request, uuid, zipfile
base, bundle = os.environ["PODIUM_URL"], os.environ["BUNDLE"]
organizer = {"Authorization": f"Bearer {os.environ['ORGANIZER']}"}
participant = {"Authorization": f"Bearer {os.environ['TOKEN']}"}

def call(path, headers, files=None, method="POST"):
    body, extra = b"", {}
    if files:
        boundary = uuid.uuid4().hex
        for field, (name, data) in files.items():
            body += (f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; filename="{name}"\r\n'
                     "Content-Type: application/zip\r\n\r\n").encode() + data + b"\r\n"
        body += f"--{boundary}--\r\n".encode()
        extra = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
    request = urllib.request.Request(base + path, data=body if method == "POST" else None, method=method,
                                     headers={**headers, **extra})
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return json.load(answer)
    except urllib.error.HTTPError as exc:
        sys.exit(f"{method} {path}: {exc.code} {exc.read().decode()[:500]}")

created = call("/api/v1/competitions", organizer, {"bundle": ("bundle.zip", open(bundle, "rb").read())})
slug = created["slug"]
call(f"/api/v1/competitions/{slug}/participation", participant)
call(f"/api/v1/competitions/{slug}/participants/{os.environ['PARTICIPANT']}/approve", organizer)
# A result submission: the third task's reference labels as the prediction, and a duration the program reports.
with zipfile.ZipFile(bundle) as source:
    labels = source.read("third/reference_data/testing_label")
result = io.BytesIO()
with zipfile.ZipFile(result, "w") as archive:
    archive.writestr("prediction", labels)
    archive.writestr("metadata.json", json.dumps({"duration": 2.5}))
phase = f"/api/v1/competitions/{slug}/tasks/wheat-seed-third-task/phases/single-phase-with-multiple-task"
submission = call(f"{phase}/submissions", participant, {"file": ("result.zip", result.getvalue())})
deadline = time.monotonic() + 300
while submission["status"] not in ("scored", "failed") and time.monotonic() < deadline:
    time.sleep(1)
    submission = call(f"/api/v1/submissions/{submission['id']}", participant, method="GET")
print(f"competition {slug}, submission {submission['id']}: {submission['status']} {submission.get('metrics')}"
      + (f" ({submission.get('message')})" if submission["status"] != "scored" else ""))
sys.exit(0 if submission["status"] == "scored" and submission.get("metrics") == {"accuracy": 1.0, "duration": 2.5} else 1)
PY
program_s=$(( $(date +%s) - t0 ))

# --- a code submission, run by the baseline worker in its sandbox, then scored ----------------
# The demo seeds the code example where the web tier finds bubblewrap (the image ships it).
grep -Eq '^  svident-code +created$' <<<"$demo" || { echo "podium demo did not create svident-code:"; echo "$demo"; exit 1; } >&2
say "a program (the starting kit of svident-code) submitted to its code phase"
t0=$(date +%s)
PODIUM_URL="http://127.0.0.1:$PODIUM_PORT" TOKEN="$token" python3 - <<'PY'
import io, json, os, sys, time, urllib.request, uuid, zipfile
base, auth = os.environ["PODIUM_URL"], {"Authorization": f"Bearer {os.environ['TOKEN']}"}
program = io.BytesIO()
with zipfile.ZipFile(program, "w") as archive:
    archive.write("examples/svident-code/starting-kit/predict.py", "predict.py")
boundary = uuid.uuid4().hex
body = (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="program.zip"\r\n'
        "Content-Type: application/zip\r\n\r\n").encode() + program.getvalue() + f"\r\n--{boundary}--\r\n".encode()
request = urllib.request.Request(
    f"{base}/api/v1/competitions/svident-code/tasks/detection/phases/test/submissions", data=body, method="POST",
    headers={**auth, "Content-Type": f"multipart/form-data; boundary={boundary}"})
with urllib.request.urlopen(request, timeout=60) as answer:
    submission = json.load(answer)
if submission["status"] != "awaiting_run":
    sys.exit(f"the program was not taken as code: {submission['status']}")
deadline = time.monotonic() + 300
while submission["status"] not in ("scored", "failed") and time.monotonic() < deadline:
    time.sleep(1)
    with urllib.request.urlopen(urllib.request.Request(f"{base}/api/v1/submissions/{submission['id']}", headers=auth)) as answer:
        submission = json.load(answer)
run = submission.get("code_run") or {}
print(f"code submission {submission['id']}: {submission['status']} {submission.get('metrics')}; run: stage {run.get('stage')},"
      f" exit {run.get('exit_code')}, {run.get('wall_seconds') or 0:.2f} s, peak {(run.get('peak_memory_bytes') or 0) // 2**20} MB"
      + (f" ({submission.get('message')}; waits for {run.get('waiting_for')})" if submission["status"] != "scored" else ""))
ok = submission["status"] == "scored" and (submission.get("metrics") or {}).get("f1", 0) > 0
sys.exit(0 if ok and run.get("stage") == "scored" and run.get("exit_code") == 0 else 1)
PY
code_s=$(( $(date +%s) - t0 ))

say "compose restart worker"
compose restart worker >/dev/null
wait_healthy worker 2 240
submit_and_wait

# --- the embedded default in one container: its volume, read-only root -------------------------
embedded="$project-embedded"
say "docker run $embedded (the embedded default, volume $embedded)"
embedded_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# Refused: no PODIUM_SECRET_KEY (exit 2, one line), a folder uid 10001 cannot write (exit 2).
refusal=$(docker run --rm podium 2>&1) && { echo "the web tier started without PODIUM_SECRET_KEY" >&2; exit 1; }
case "$refusal" in "PODIUM_SECRET_KEY is not set"*) ;; *) echo "unexpected refusal: $refusal" >&2; exit 1 ;; esac
refusal=$(docker run --rm --tmpfs /srv/podium/var:uid=0,mode=755 -e PODIUM_SECRET_KEY podium 2>&1) \
    && { echo "the web tier started on a data folder it cannot write" >&2; exit 1; }
case "$refusal" in "the data folder /srv/podium/var is not writable by uid 10001: chown -R 10001"*) ;;
    *) echo "unexpected refusal: $refusal" >&2; exit 1 ;; esac
docker run -d --name "$embedded" -p "127.0.0.1:$embedded_port:8000" -v "$embedded:/srv/podium/var" \
    --read-only --tmpfs /tmp -e PODIUM_SECRET_KEY podium >/dev/null
trap 'docker rm -f "$embedded" >/dev/null 2>&1; docker volume rm "$embedded" >/dev/null 2>&1; cleanup' EXIT
deadline=$(( $(date +%s) + 240 ))
until [ "$(health "$embedded")" = healthy ]; do
    [ "$(date +%s)" -gt "$deadline" ] && { docker logs --tail 40 "$embedded"; echo "the embedded container is not healthy" >&2; exit 1; }
    sleep 2
done
docker exec "$embedded" podium demo >/dev/null
chart=$(python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:$embedded_port/c/svident/detection/test/progress.svg', timeout=60).read()[:200].decode())")
case "$chart" in *"<svg"*|*"<?xml"*) ;; *) echo "no chart from the embedded container: $chart" >&2; exit 1 ;; esac
docker exec "$embedded" test -s /srv/podium/var/podium.sqlite3
docker exec "$embedded" test -d /srv/podium/var/matplotlib
say "embedded: healthy, demo seeded, chart drawn; SQLite file and matplotlib cache in the volume"

web_mb=$(docker image inspect podium --format '{{.Size}}' | awk '{printf "%.0f", $1 / 1e6}')
say "passed in $(( $(date +%s) - started )) s"
echo "image podium: ${web_mb} MB; build ${build_s} s; stack healthy after ${up_s} s; first upload scored in ${first_s} s;" \
    "program phase imported and scored in ${program_s} s; code submission run and scored in ${code_s} s"
echo "per-run cgroups: PODIUM_SANDBOX_ALLOW_NO_CGROUP=$PODIUM_SANDBOX_ALLOW_NO_CGROUP"
if [ -n "${GPU:-}" ]; then
    gpu_mb=$(docker image inspect podium-gpu --format '{{.Size}}' | awk '{printf "%.0f", $1 / 1e6}')
    echo "image podium-gpu: ${gpu_mb} MB; build ${gpu_build_s} s"
fi
for image in python:3.11-slim postgres:15 redis:7; do
    echo "base $image: $(docker image inspect "$image" --format '{{.Size}}' | awk '{printf "%.0f", $1 / 1e6}') MB"
done
