"""HTTP: the JSON API under ``/api/v1`` (and, later, pages). Handlers call ``app.services`` only."""
