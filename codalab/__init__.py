"""CodaLab and Codabench competitions in Podium; pure (no application code, no framework).

``codalab.bundle`` translates a CodaLab v1.5 or Codabench v2 ``competition.yaml`` into Podium's own
bundle format, listing what cannot be mapped; ``codalab.program`` runs a bundle's scoring program the
way those platforms do (its command, the ``/app/...`` paths, ``scores.json`` or ``scores.txt``), inside
the sandbox of the ``sandbox`` package; ``codalab.ingestion`` holds the conventions by which their
ingestion programs run code submissions; ``codalab.archives`` unpacks their zips with bounds.
"""
