"""Generic scorers that organizers configure in a bundle (``scorer_options``); importing this package registers them.

``trec`` (TREC qrels and runs, trec_eval's measures).
"""

from scorers.generic import trec as _trec  # noqa: F401  (registers the scorer)
