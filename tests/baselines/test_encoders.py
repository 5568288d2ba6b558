"""The bundled MiniLM encoder: offline loading, batched unit vectors in input order, cancellation."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from baselines import Cancelled, RunContext
from baselines.encoders import DIMENSIONS, MiniLM, torch_device
from tests.baselines.support import Recorder

pytestmark = pytest.mark.slow

TEXTS = [
    "Respondents were asked how much they trust the police.",
    "Trust in the police was measured on a five-point scale.",
    "The weather in Mannheim was mild that spring.",
]


@pytest.fixture(scope="module")
def model() -> MiniLM:
    return MiniLM("cpu")


def _context(recorder: Recorder, total: int) -> RunContext:
    context = RunContext(recorder.on_progress, recorder.lines.append, recorder.should_stop)
    context.start(total)
    return context


def test_the_device_is_cuda_only_when_torch_sees_one() -> None:
    assert torch_device() == ("cuda" if torch.cuda.is_available() else "cpu")


def test_vectors_are_unit_length_in_input_order_and_batched(model: MiniLM) -> None:
    recorder = Recorder()
    vectors = model.encode(TEXTS, _context(recorder, 3), batch_size=2)
    assert vectors.shape == (3, DIMENSIONS)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # Two batches: progress after 2 texts, then after 3.
    assert recorder.progress == [(0, 3), (2, 3), (3, 3)]
    reordered = model.encode([TEXTS[2], TEXTS[0], TEXTS[1]], _context(Recorder(), 3), batch_size=1)
    assert np.allclose(reordered[[1, 2, 0]], vectors, atol=1e-5)
    # Two sentences about trust in the police are closer to each other than to the weather.
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > similarity[0, 2] + 0.2


def test_encoding_stops_between_batches_when_asked(model: MiniLM) -> None:
    recorder = Recorder(stop_after=2)
    with pytest.raises(Cancelled):
        model.encode(TEXTS, _context(recorder, 3), batch_size=1)
    assert recorder.progress == [(0, 3), (1, 3)]


def test_no_text_gives_an_empty_matrix(model: MiniLM) -> None:
    assert model.encode([], _context(Recorder(), 0), batch_size=8).shape == (0, DIMENSIONS)
