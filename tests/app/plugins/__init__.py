"""Plugin modules for ``PODIUM_PLUGINS`` in tests: worker processes import them at start."""
