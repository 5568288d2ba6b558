"""Running untrusted programs under bubblewrap, with limits; pure (no application code, no framework).

``run(argv, binds, ...)`` runs one command with no network, a read-only system and runtime, write
access only to the folders marked writable and a private /tmp, a clean environment and limits on
wall time, CPU, memory, processes and output (``Limits``), memory and processes counted for all the
run's processes together in a cgroup of its own (``sandbox.cgroups``). ``Runtime`` names the Python
environment seen at ``/runtime``, whose ``bin/`` comes first on PATH. See ``sandbox.bwrap`` for the
sandbox and ``sandbox.runner`` for how a run is watched.
"""

from sandbox.bwrap import Bind
from sandbox.limits import Limits
from sandbox.output import tree_size
from sandbox.runner import ISOLATIONS, RunResult, SandboxUnavailable, check_available, run
from sandbox.runtimes import (
    DEFAULT_KEY,
    Runtime,
    RuntimeProblem,
    choose_runtime,
    image_warning,
    parse_runtimes,
    runtime_at,
    server_runtime,
)

__all__ = [
    "DEFAULT_KEY",
    "ISOLATIONS",
    "Bind",
    "Limits",
    "RunResult",
    "Runtime",
    "RuntimeProblem",
    "SandboxUnavailable",
    "check_available",
    "choose_runtime",
    "image_warning",
    "parse_runtimes",
    "run",
    "runtime_at",
    "server_runtime",
    "tree_size",
]
