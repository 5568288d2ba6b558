"""``podium worker --remote URL``: a worker of a competition's own queue, on a machine the organizers own.

It holds one credential of the queue and nothing else (no database URL, no broker, no secret key) and speaks the
protocol of ``app.web.api.worker`` over HTTPS: it asks for the next run of its queue (every ``poll`` seconds while
none waits; saying how many GPUs it has, ``PODIUM_GPU_DEVICES`` as on the platform's workers, so that a run that
needs one is left to a worker with one), fetches the program and the phase's inputs through the links it was
given, runs the program with ``app.services.code.sandboxed.run_code`` (the sandbox and limits of the platform's
own workers; a GPU held for a run whose phase asks for one) while a thread renews the lease, and reports how it
ran with its predictions. The platform validates and scores them, unless the phase sends its program scoring to
the queue too: then the worker is also given submissions to score (first, before any run), with links to the
submitted file and the phase's gold, runs the phase's scoring program as the platform's scoring job would
(``app.worker.remote_scoring``) and reports what it wrote.

A worker that dies mid-run leaves its lease to expire, and another worker of the queue takes the run over; a late
report of the dead one's attempt is refused (409), and so this one drops a run whose lease it lost. A refused
credential (revoked, 401) stops the worker: ``Refused``, exit status 1. Network errors are retried with backoff.
"""

from __future__ import annotations

import json
import logging
import tempfile
import threading
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import httpx

from app.config import Settings
from app.services.code.sandboxed import CodeOutcome, Isolation, run_code
from app.services.code.settings import CodeSettings
from app.services.workers.report import Report
from app.worker.remote_errors import LeaseLost, Refused
from app.worker.remote_scoring import score_one
from codalab.archives import ArchiveProblem
from sandbox import RuntimeProblem, SandboxUnavailable, choose_runtime
from sandbox.cleanup import run_folder
from sandbox.gpus import Gpu, GpuProblem, detect, hold

log = logging.getLogger(__name__)

#: How much of a fetched file is in memory at once.
CHUNK = 1024 * 1024
#: The longest wait between two tries after a network error.
MAX_BACKOFF = 60.0


def report_of(outcome: CodeOutcome) -> tuple[Report, bytes, bytes]:
    """The report of a run, and the ends of its stdout and stderr."""
    run = outcome.run
    if run is None:
        return Report(failure=outcome.failure), b"", b""
    report = Report(**Report.of(run), failure=outcome.failure, device=outcome.device)
    return report, run.stdout, run.stderr


class RemoteWorker:
    """One worker process: claims, runs and reports, one run at a time."""

    def __init__(self, base_url: str, credential: str, settings: Settings, *, poll_seconds: float = 5.0) -> None:
        self.settings = settings
        self.poll_seconds = poll_seconds
        self.client = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers={"Authorization": f"Bearer {credential}"},
            timeout=httpx.Timeout(60.0, connect=10.0),
        )
        self.stopping = threading.Event()
        #: Why this machine cannot run programs, once a run found out (the worker then stops).
        self.broken: str | None = None
        try:
            self.gpus: tuple[Gpu, ...] = detect(settings.gpu_devices)
        except GpuProblem as exc:
            log.warning("this worker gives code runs no GPU: %s", exc)
            self.gpus = ()

    def close(self) -> None:
        self.client.close()

    def _send(self, method: str, url: str, sink: Path | None, **kwargs: Any) -> httpx.Response:
        if sink is None:
            return self.client.request(method, url, **kwargs)
        with self.client.stream(method, url, **kwargs) as answer:
            if answer.status_code != 200:
                answer.read()
                return answer
            with sink.open("wb") as file:  # a program of hundreds of MB goes to disk as it arrives
                for chunk in answer.iter_bytes(CHUNK):
                    file.write(chunk)
            return answer

    def _call(self, method: str, url: str, sink: Path | None = None, **kwargs: Any) -> httpx.Response:
        """The platform's answer (its body written to ``sink`` where one is given); network errors and 5xx answers
        are tried again with backoff, a refused credential raises ``Refused``, a lost lease ``LeaseLost``."""
        wait = 1.0
        while True:
            try:
                answer = self._send(method, url, sink, **kwargs)
            except httpx.TransportError as exc:
                log.warning("the platform did not answer (%s); trying again in %.0f s", exc, wait)
            else:
                if answer.status_code == 401:
                    raise Refused(answer.json().get("detail", answer.text))
                if answer.status_code == 409:
                    raise LeaseLost(answer.json().get("detail", answer.text))
                if answer.status_code < 500:
                    answer.raise_for_status()
                    return answer
                log.warning("the platform answered %s; trying again in %.0f s", answer.status_code, wait)
            if self.stopping.wait(wait):
                raise Refused("stopped")
            wait = min(wait * 2, MAX_BACKOFF)

    def serve(self) -> None:
        """Take and run the queue's runs until stopped or refused."""
        while not self.stopping.is_set():
            job = self._call("POST", "/api/v1/worker/claim", json={"gpus": len(self.gpus)}).json()
            run, scoring = job["run"], job.get("scoring")
            try:
                if scoring is not None:
                    score_one(self, scoring)
                elif run is not None:
                    self.run_one(run)
                else:
                    self.stopping.wait(self.poll_seconds)
            except LeaseLost as exc:
                log.warning("%s is no longer this worker's: %s", run or scoring, exc)

    def _isolation(self, code: CodeSettings) -> Isolation:
        runtime, _ = choose_runtime(code.runtime, self.settings.runtime_table)
        return Isolation(
            runtime=runtime,
            isolation=self.settings.program_sandbox,
            require_cgroup=not self.settings.sandbox_allow_no_cgroup,
        )

    def _run(self, program: Path, inputs: Path, code: CodeSettings) -> CodeOutcome:
        """The program in the sandbox, with one GPU of this machine held where its phase asks for one (one run per
        GPU of the machine, as on the platform's workers: ``sandbox.gpus.hold``)."""
        where = self._isolation(code)
        if not (code.gpu and self.gpus):
            return run_code(program, inputs, code, where)
        with hold(self.gpus, self.settings.gpu_lock_dir or Path(tempfile.gettempdir())) as gpu:
            placed = replace(where, devices=gpu.nodes(), env=tuple(gpu.env().items()))
            return replace(run_code(program, inputs, code, placed), device=gpu.describe())

    def run_one(self, run: dict[str, Any]) -> None:
        with run_folder("podium-fetch-") as folder:
            program, inputs = folder / "program.zip", folder / "inputs.zip"
            self._call("GET", run["program_url"], sink=program)
            self._call("GET", run["inputs_url"], sink=inputs)
            self._run_fetched(run, program, inputs)

    def _run_fetched(self, run: dict[str, Any], program: Path, inputs: Path) -> None:
        run_id, lease = run["run_id"], run["lease"]
        log.info("running code run %s", run_id)
        code = CodeSettings.of(run["code"])
        done = threading.Event()
        url, what = f"/api/v1/worker/runs/{run_id}/heartbeat", f"code run {run_id}"
        beats = threading.Thread(
            target=self.heartbeats, args=(url, what, lease, run["lease_seconds"], done), daemon=True
        )
        beats.start()
        try:
            try:
                outcome = self._run(program, inputs, code)
                report, stdout, stderr = report_of(outcome)
            except SandboxUnavailable as exc:
                # This machine cannot run programs: the run goes back to the queue and this worker stops, rather
                # than failing every run of the queue it would take.
                outcome, (report, stdout, stderr) = CodeOutcome(None), (Report(cannot_run=str(exc)), b"", b"")
                self.broken = str(exc)
                self.stopping.set()
                log.error("this machine's sandbox cannot run programs (%s); the run goes back to its queue", exc)
            except (RuntimeProblem, ArchiveProblem) as exc:
                outcome, (report, stdout, stderr) = CodeOutcome(None), (Report(platform_problem=str(exc)), b"", b"")
        finally:
            done.set()
            beats.join()
        files: dict[str, tuple[str, bytes]] = {"stdout": ("stdout", stdout), "stderr": ("stderr", stderr)}
        if outcome.predictions is not None:
            files["predictions"] = ("predictions", outcome.predictions)
        form = {"lease": lease, "report": json.dumps(asdict(report))}
        answer = self._call("POST", f"/api/v1/worker/runs/{run_id}/result", data=form, files=files)
        log.info("code run %s: %s", run_id, answer.json()["status"])

    def heartbeats(self, url: str, what: str, lease: str, lease_seconds: float, done: threading.Event) -> None:
        """Keep the lease of ``what`` (a run or a scoring) with a heartbeat to ``url`` every third of the lease,
        until ``done``; a revoked credential stops the worker."""
        while not done.wait(max(1.0, lease_seconds / 3)):
            try:
                self._call("POST", url, json={"lease": lease})
            except LeaseLost as exc:
                log.warning("%s: %s", what, exc)
                return
            except Refused:
                self.stopping.set()
                return


def serve(base_url: str, credential: str, settings: Settings, *, poll_seconds: float = 5.0) -> int:
    """Run a remote worker until SIGTERM (after its current run) or until its credential is refused (1)."""
    import signal

    worker = RemoteWorker(base_url, credential, settings, poll_seconds=poll_seconds)
    signal.signal(signal.SIGTERM, lambda *_: worker.stopping.set())
    try:
        worker.serve()
    except Refused as exc:
        if not worker.stopping.is_set() or str(exc) != "stopped":
            log.error("the platform refused this worker: %s", exc)
            return 1
    except httpx.HTTPStatusError as exc:
        log.error("the platform refused a call: %s: %s", exc, exc.response.text[:500])
        return 1
    finally:
        worker.close()
    return 1 if worker.broken else 0
