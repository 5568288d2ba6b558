"""Competition bundles: a strict YAML file plus the files it names, checked key by key into a
``CompetitionSpec`` (from a folder on disk, or from an archive sent over the API)."""
