"""Generic scorers that organizers configure in a bundle (``scorer_options``); each module registers its scorer when
imported (``scorers.registry.BUILT_IN`` names them, so that only the scorer used is imported).

``trec`` (TREC qrels and runs, trec_eval's measures), ``classification`` (one label per id), ``regression`` (one
number per id) and ``program`` (a CodaLab or Codabench competition's own scoring program, sandboxed).
"""
