from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from app.services.bundles.spec import BundleError
from app.services.bundles.uploads import DATA_REFUSED, spec_from_upload
from tests.app.builders import GOLD
from tests.app.labels_scorer import LabelScorer

YAML = """slug: up
title: Up
tasks:
  - slug: t
    title: T
    scorer: test-labels
    phases:
      - {slug: p, title: P, gold: {%s: gold.json}}
"""


def archive(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zipped:
        for name, data in entries.items():
            zipped.writestr(name, data)
    return buffer.getvalue()


def test_a_zipped_bundle_folder_is_read(labels: type[LabelScorer]) -> None:
    data = archive({"up/competition.yaml": (YAML % "path").encode(), "up/gold.json": json.dumps(GOLD).encode()})
    spec = spec_from_upload(data, data_dir=None, max_bytes=10_000, may_read_data=False)
    assert (spec.slug, spec.tasks[0].phases[0].gold.data) == ("up", json.dumps(GOLD).encode())


def test_a_lone_yaml_file_names_server_data(labels: type[LabelScorer], tmp_path: Path) -> None:
    (tmp_path / "gold.json").write_text(json.dumps(GOLD))
    spec = spec_from_upload((YAML % "data").encode(), data_dir=tmp_path, max_bytes=10_000, may_read_data=True)
    assert spec.tasks[0].phases[0].gold.name == "gold.json"


@pytest.mark.parametrize(
    "named",
    ["gold.json", "missing.json", "secret/../gold.json", "/etc/passwd", "link.json", "folder"],
)
def test_who_may_not_read_the_data_folder_gets_one_refusal_whatever_the_path(
    labels: type[LabelScorer], tmp_path: Path, named: str
) -> None:
    """An existing file, a missing one, a path that climbs, an absolute one, a link that leads out and a
    folder: all answered alike, so the refusal is no oracle on what the data folder holds."""
    (tmp_path / "gold.json").write_text(json.dumps(GOLD))
    (tmp_path / "folder").mkdir()
    (tmp_path / "link.json").symlink_to("/etc/passwd")
    bundle = (YAML % "data").replace("data: gold.json", f"data: {json.dumps(named)}").encode()
    with pytest.raises(BundleError) as refused:
        spec_from_upload(bundle, data_dir=tmp_path, max_bytes=10_000, may_read_data=False)
    assert refused.value.problems == [("tasks[0].phases[0].gold", DATA_REFUSED)]


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ({"../evil.yaml": b"x"}, "leaves its folder"),
        ({"/etc/evil": b"x"}, "leaves its folder"),
        ({"a/b.json": b"x"}, "has no competition.yaml"),
        ({"competition.yaml": b"x" * 20_000}, "unpacks to more than 10000 bytes"),
    ],
)
def test_unsafe_or_incomplete_archives_are_refused(entries: dict[str, bytes], message: str) -> None:
    with pytest.raises(BundleError) as refused:
        spec_from_upload(archive(entries), data_dir=None, max_bytes=10_000, may_read_data=False)
    assert message in refused.value.problems[0][1]


def test_a_broken_archive_is_refused() -> None:
    with pytest.raises(BundleError, match="not a readable zip archive"):
        spec_from_upload(b"PK\x03\x04 not really a zip", data_dir=None, max_bytes=10_000, may_read_data=False)
