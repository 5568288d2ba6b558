"""Archives whose entries cannot all be unpacked: refused by ``check`` (at upload) as by ``unpack``."""

from __future__ import annotations

import io
import warnings
import zipfile
from pathlib import Path

import pytest

from codalab.archives import ArchiveProblem, check, unpack


def stored(names: list[str]) -> bytes:
    """A zip of the entries ``names`` in this order (a name ending in ``/`` is a folder), repeats kept."""
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w") as archive:
        warnings.simplefilter("ignore")  # zipfile warns of a repeated name, and stores it
        for name in names:
            archive.writestr(name, b"" if name.endswith("/") else name.encode())
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("names", "fragments"),
    [
        (["a", "a/b"], ("'a' and 'a/b' cannot both be unpacked", "'a' is a file", "'a/b' needs it to be a folder")),
        (["a/b", "a"], ("'a' and 'a/b' cannot both be unpacked",)),
        (["x/a", "x/a/b/c.txt"], ("'x/a' and 'x/a/b/c.txt' cannot both be unpacked",)),
        (["a/", "a"], ("'a' and 'a/' cannot both be unpacked",)),
        (["a", "a/"], ("'a' and 'a/' cannot both be unpacked",)),
        (["a", "./a/b"], ("'a' and './a/b' cannot both be unpacked",)),
    ],
    ids=[
        "file then below it",
        "below then file",
        "deep",
        "folder then file",
        "file then folder",
        "./ below",
    ],
)
def test_entries_that_cannot_all_be_unpacked_are_refused_naming_both(
    tmp_path: Path, names: list[str], fragments: tuple[str, ...]
) -> None:
    data = stored(names)
    with pytest.raises(ArchiveProblem) as at_upload:
        check(data, max_bytes=1000, max_entries=10, what="submission")
    with pytest.raises(ArchiveProblem) as unpacking:
        unpack(data, tmp_path / "out", max_bytes=1000, max_entries=10, what="submission")
    for fragment in fragments:
        assert fragment in str(at_upload.value)
    assert str(unpacking.value) == str(at_upload.value)
    assert str(at_upload.value).startswith("the submission entries ")
    assert list((tmp_path / "out").iterdir()) == []  # refused before anything was written


def test_entries_that_can_all_be_unpacked_are_kept(tmp_path: Path) -> None:
    names = ["a/", "a/", "./a/", "a/b", "A", "a/B", "a/b2/", "a/b2/c", "__MACOSX/a", "__MACOSX/a/b", "x/.DS_Store"]
    data = stored([*names, "c", "./c", "d//e", "d/e"])
    assert check(data, max_bytes=1000, max_entries=20) == unpack(data, tmp_path, max_bytes=1000, max_entries=20)
    assert (tmp_path / "A").read_bytes() == b"A"  # names differing in case are different files
    assert (tmp_path / "a" / "b").read_bytes() == b"a/b"
    assert (tmp_path / "a" / "b2" / "c").read_bytes() == b"a/b2/c"
    # A path stored again is unpacked over the earlier one, as zip tools that append expect.
    assert (tmp_path / "c").read_bytes() == b"./c"
    assert (tmp_path / "d" / "e").read_bytes() == b"d/e"


@pytest.mark.parametrize("name", ["n" * 256, "/".join(["deep"] * 700)], ids=["a long name", "a long path"])
def test_a_name_too_long_for_the_file_system_is_refused(tmp_path: Path, name: str) -> None:
    data = stored([name])
    for attempt in (
        lambda: check(data, max_bytes=1000, max_entries=10),
        lambda: unpack(data, tmp_path, max_bytes=1000, max_entries=10),
    ):
        with pytest.raises(ArchiveProblem, match="has a name too long to unpack"):
            attempt()
