"""``PODIUM_PLUGINS``: modules imported at start; a broken one is named with its error."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.config import Settings
from app.plugins import PluginError, load_plugins


def test_the_setting_lists_modules_in_order() -> None:
    assert Settings(plugins=" a.b , c,, ").plugin_modules == ("a.b", "c")
    assert Settings(plugins="").plugin_modules == ()


def test_plugins_are_imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "podium_plugin_ok.py").write_text("LOADED = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert load_plugins(("podium_plugin_ok",)) == ["podium_plugin_ok"]
    import podium_plugin_ok  # type: ignore[import-not-found]

    assert podium_plugin_ok.LOADED


def test_a_broken_or_missing_plugin_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "podium_plugin_broken.py").write_text("raise RuntimeError('needs a GPU')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PluginError, match=r"cannot import 'podium_plugin_broken': RuntimeError: needs a GPU"):
        load_plugins(("podium_plugin_broken",))
    with pytest.raises(PluginError, match=r"cannot import 'no_such_plugin': ModuleNotFoundError"):
        load_plugins(("no_such_plugin",))
