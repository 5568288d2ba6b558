"""The memory of dropped input files given back to the system (``scorers.io.release_freed_memory``)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: In a process of its own (a heap in a known state): a large block freed raises glibc's thresholds, so the next
#: blocks come from the heap and stay with the process once freed, until ``release_freed_memory`` asks for them back.
SCRIPT = textwrap.dedent(
    """
    import json, sys
    from scorers.io import release_freed_memory

    def rss():
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS"))

    big = bytearray(24 << 20)  # mmapped (under glibc's 32 MiB cap on the threshold), every page written
    del big
    blocks = [bytearray(4 << 20) for _ in range(6)]
    held = rss()
    del blocks
    dropped = rss()
    small = release_freed_memory(1 << 20)
    after_small = rss()
    asked = release_freed_memory(24 << 20)
    json.dump({"held": held, "dropped": dropped, "small": small, "after_small": after_small, "asked": asked,
               "after": rss()}, sys.stdout)
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim is asked on Linux only")
def test_the_freed_blocks_of_dropped_files_go_back_to_the_system() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, check=True)
    seen = json.loads(done.stdout)
    mib = 1 << 20
    assert seen["dropped"] > seen["held"] - 8 * mib  # freed, yet still with the process (glibc kept them)
    assert seen["small"] is False and seen["after_small"] > seen["dropped"] - 4 * mib  # too little dropped to ask
    assert seen["asked"] is True
    assert seen["after"] < seen["dropped"] - 16 * mib  # given back
