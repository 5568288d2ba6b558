"""Shared test helpers: where ../shared lives, and a skip with a clear reason when it is absent; how
the tests are spread over parallel workers."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parent.parent

# Passwords hashed with argon2's cheapest parameters, in this process and in every server and command the tests
# start: with the production parameters a hash and a check cost about 0.2 s of CPU each, and the suite creates
# and logs in thousands of users. tests/app/services/accounts/test_password_profiles.py tests the default.
os.environ.setdefault("PODIUM_PASSWORD_HASH_PROFILE", "cheapest")

#: One client for the tests' polls of local servers: ``httpx.get`` makes a new client each time, whose TLS
#: context loads the certificate bundle (about 20 ms of CPU), for servers that speak plain HTTP.
HTTP = httpx.Client(timeout=60.0)


def environment_without_settings() -> dict[str, str]:
    """This process's environment without its ``PODIUM_*`` settings, for a server or command a test starts with
    settings of its own; the suite's cheap password hashes (above) stay."""
    return {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("PODIUM_") or key == "PODIUM_PASSWORD_HASH_PROFILE"
    }


def podium_probe(report: str) -> str:
    """A ``python -c`` program that runs ``podium`` (its arguments after the program's) as the console script does,
    then prints the expression ``report`` on stderr, however the command ended: what it left in ``sys.modules``."""
    return (
        "import sys\n"
        "from app.cli import main\n"
        "sys.argv = ['podium', *sys.argv[1:]]\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        f"    print({report}, file=sys.stderr)\n"
    )


def shared_dir() -> Path:
    """The shared inputs folder: ``PODIUM_SHARED_DIR`` or ``../shared`` beside the checkout."""
    return Path(os.environ.get("PODIUM_SHARED_DIR") or ROOT.parent / "shared").resolve()


def require_shared(*parts: str) -> Path:
    """The path under the shared folder, or skip the test saying which folder is missing."""
    path = shared_dir().joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared inputs not found at {path} (set PODIUM_SHARED_DIR to the shared folder)")
    return path


@pytest.fixture
def shared() -> Path:
    return require_shared()


def _name_group(item: pytest.Item, group: str) -> None:
    """Put the group in the test's id as pytest-xdist does (``...::test@group``), which is how its loadgroup
    scheduler sees groups. pytest 9.2 keeps node ids structured and ignores the attribute that pytest-xdist 3.8
    still sets, so that every test went to any worker and a module's fixture was built on each worker that ran
    one of its tests (pytest-dev/pytest-xdist#1386); where pytest-xdist sets it itself, the scheduler reads the
    last suffix, the same group."""
    try:
        from _pytest.nodeid import NodeId
    except ImportError:  # an older pytest: pytest-xdist's own suffix works there
        return
    item._id = NodeId.parse(f"{item.nodeid}@{group}")


#: What a test marked ``slow`` weighs against an unmarked one when the longest work is sent out first.
SLOW_WEIGHT = 30


def pytest_configure(config: pytest.Config) -> None:
    # The cheap hashes also for the tests that create users through the services, without an app or a command.
    from app.services.accounts.users import use_password_profile

    use_password_profile(os.environ["PODIUM_PASSWORD_HASH_PROFILE"])
    # The tests go out in the order of pytest_collection_modifyitems below: pytest-xdist would otherwise
    # sort its units by their number of tests, which says little about how long they take.
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``pytest -n N --dist loadgroup`` (``make test``), keep together the tests that share a
    fixture wider than one test (a module's server, browser or schema): each such module runs on one
    worker, which builds the fixture once. Every other test goes wherever a worker is free; what the
    tests use on this machine (databases, broker queues, ports, folders) is unique per test or per
    worker already.

    The units of work (a group, or a test on its own) then go out heaviest first, a ``slow`` test
    weighing ``SLOW_WEIGHT`` times a quick one: a long group that started last would keep one worker
    busy after the others ran out of work."""
    units: dict[str, list[pytest.Item]] = {}
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        definitions = info.name2fixturedefs.values() if info is not None else ()
        unit = item.nodeid
        if any(d.scope in ("module", "class", "package") for defs in definitions for d in defs):
            unit = item.nodeid.split("::", 1)[0]
            item.add_marker(pytest.mark.xdist_group(unit))
            if getattr(config.option, "loadgroup", False):  # a worker of `pytest -n N --dist loadgroup`
                _name_group(item, unit)
        units.setdefault(unit, []).append(item)
    if not hasattr(config, "workerinput"):  # in one process (TEST_WORKERS=0) the order is the collection's
        return

    def weight(tests: list[pytest.Item]) -> int:
        return sum(SLOW_WEIGHT if test.get_closest_marker("slow") else 1 for test in tests)

    items[:] = [item for tests in sorted(units.values(), key=weight, reverse=True) for item in tests]
