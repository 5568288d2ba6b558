"""Generic scorers that organizers configure in a bundle (``scorer_options``); importing this package registers them.

``trec`` (TREC qrels and runs, trec_eval's measures), ``classification`` (one label per id), ``regression`` (one
number per id) and ``program`` (a CodaLab or Codabench competition's own scoring program, sandboxed).
"""

from scorers.generic import classification as _classification  # noqa: F401  (registers the scorer)
from scorers.generic import program as _program  # noqa: F401
from scorers.generic import regression as _regression  # noqa: F401
from scorers.generic import trec as _trec  # noqa: F401
