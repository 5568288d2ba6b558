"""Request and response bodies of the JSON API, as pydantic models (they make the OpenAPI document).

The one place where what the services return is shaped into what the API answers: each response
model has an ``of(...)`` that builds it from the services' typed objects (records, snapshots, rows).
One module per area, like the routers.
"""
