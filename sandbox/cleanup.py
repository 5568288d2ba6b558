"""Removing a run's folders after the run, whatever the program left in them."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any


def remove_tree(root: Path) -> None:
    """Remove ``root`` and everything in it, taking back folders the program made unreadable (the runner's
    user owns them, so it may)."""

    def retry(function: Any, path: str, _info: Any) -> None:
        os.chmod(os.path.dirname(path), 0o700)
        if os.path.isdir(path) and not os.path.islink(path):
            os.chmod(path, 0o700)
        function(path)

    shutil.rmtree(root, onerror=retry)
