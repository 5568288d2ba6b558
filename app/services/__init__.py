"""Use cases: the application's rules, independent of HTTP.

Services take a SQLAlchemy session, only ``flush()`` (the caller commits once per request or job),
and refuse with the errors of ``app.services.errors``, which the web layer maps to HTTP answers.
"""
