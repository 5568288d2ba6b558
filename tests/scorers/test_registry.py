"""The lazy registry: every built-in scorer is listed without importing its module, imported when first asked
for, and ``BUILT_IN`` names every scorer module of the package (a scorer module it missed would be unreachable)."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from typing import Any, ClassVar

import numpy as np
import pytest

import scorers
from scorers.errors import UnknownScorer
from scorers.registry import BUILT_IN, Registry

#: The packages whose modules may register scorers.
PACKAGES = ("scorers.tasks", "scorers.generic")


def _registered_by_modules() -> dict[str, str]:
    """``{scorer name: module}`` of every scorer class defined in the packages' modules, found by importing them."""
    found = {}
    for package in PACKAGES:
        path = importlib.import_module(package).__path__
        for info in pkgutil.iter_modules(path):
            module = importlib.import_module(f"{package}.{info.name}")
            for value in vars(module).values():
                if (
                    isinstance(value, type)
                    and issubclass(value, scorers.Scorer)
                    and value.__module__ == module.__name__
                    and "name" in vars(value)
                ):
                    found[value.name] = module.__name__
    return found


def test_built_in_names_the_module_of_every_scorer_class_of_the_package() -> None:
    assert _registered_by_modules() == BUILT_IN
    for name, module in BUILT_IN.items():
        assert scorers.scorer_class(name).__module__ == module


def test_importing_scorers_imports_no_scorer_and_asking_for_one_imports_only_its_module() -> None:
    probe = (
        "import sys, scorers\n"
        "before = sorted(m for m in sys.modules if m.startswith(('scorers.tasks.', 'scorers.generic.')))\n"
        "names = scorers.scorer_names()\n"
        "scorers.get_scorer('famus-sv')\n"
        "after = sorted(m for m in sys.modules if m.startswith(('scorers.tasks.', 'scorers.generic.', 'numpy')))\n"
        "print(before, names, after, sep='\\n')\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    before, names, after = done.stdout.splitlines()
    assert before == "[]"
    assert names == repr(sorted(BUILT_IN))
    loaded = eval(after)  # our own probe's printed list
    assert "scorers.tasks.famus_sv" in loaded
    assert not [m for m in loaded if m.startswith(("scorers.generic.", "scorers.tasks.svident", "scorers.tasks.scier"))]
    assert "numpy" not in loaded
    assert "scorers.tasks.famus" not in loaded  # the other FAMuS scorer's module


def test_famus_cdae_imports_neither_famus_sv_nor_what_only_intervals_need() -> None:
    """``podium score famus-cdae``'s start-up is the closest to its goal (3x a bare Python): its module imports
    neither the source-validation scorer nor the weighted metrics (imported when an interval asks for them)."""
    probe = (
        "import sys, scorers\n"
        "scorers.get_scorer('famus-cdae')\n"
        "print(sorted(m for m in sys.modules if m.startswith(('scorers.tasks.famus', 'scorers.families.'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    loaded = eval(done.stdout)  # our own probe's printed list
    assert "scorers.tasks.famus" in loaded
    assert not {"scorers.tasks.famus_sv", "scorers.tasks.famus_sv_format", "scorers.families.weighted"} & set(loaded)
    # The weighted metric still works, importing what it needs: one document's recall, 1.0 of 4 gold mentions.
    stats = [{"predicted": 2, "gold": 4, "soft": 1.0}]
    metric = scorers.get_scorer("famus-cdae").weighted_metric(stats, "ceaf_rme_soft_r")
    assert metric is not None
    assert metric(np.ones((1, 1))).tolist() == [0.25]


def test_an_unknown_name_lists_every_scorer_and_all_scorers_imports_them() -> None:
    with pytest.raises(UnknownScorer) as refused:
        scorers.get_scorer("no-such-scorer")
    assert str(refused.value) == f"unknown scorer 'no-such-scorer'; known scorers: {', '.join(sorted(BUILT_IN))}"
    assert [cls.name for cls in scorers.all_scorers()] == sorted(BUILT_IN)


def test_a_lazy_name_clashes_with_another_class_registered_under_it_as_an_imported_one_does() -> None:
    # In a fresh process famus-sv's module is not imported yet; registering another class under its name imports
    # it, so the clash is refused at once, as it was when every module was imported up front.
    probe = (
        "import sys, scorers\n"
        "class Impostor:\n"
        "    name = 'famus-sv'\n"
        "try:\n"
        "    scorers.register(Impostor)\n"
        "except ValueError as exc:\n"
        "    print(exc)\n"
        "print('scorers.tasks.famus_sv' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.splitlines() == [
        "a scorer named 'famus-sv' is already registered (FamusSvScorer)",
        "True",
    ]


def test_a_registry_lists_lazy_and_registered_names_and_forgets_an_unregistered_one() -> None:
    class Thing:
        name: ClassVar[str] = "thing"

    registry: Registry[Any] = Registry("widget", UnknownScorer, {"lazy": "no.such.module"})
    registry.register(Thing)
    assert registry.names() == ["lazy", "thing"]
    assert registry.get("thing") is Thing
    registry.unregister("lazy")
    assert registry.names() == ["thing"]
    with pytest.raises(UnknownScorer, match="known widgets: thing"):
        registry.get("lazy")
