"""HTTP: the JSON API under ``/api/v1`` (``api/``, its bodies in ``schemas/``) and the server-rendered
pages (``pages/``, ``templates/``, ``static/``). Handlers call ``app.services`` only; what they answer
is shaped from the services' typed results by ``app.web.schemas``."""
