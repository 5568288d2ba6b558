"""Use cases: the application's rules, independent of HTTP and of how jobs are carried; one package
per domain (see docs/ARCHITECTURE.md for the map).

Services take a SQLAlchemy session, only ``flush()`` (the caller commits once per request or job),
return typed results and refuse with the errors of ``app.services.errors``, which the web layer maps
to HTTP answers. The job functions (``scoring/job.py``, ``baselines/job.py``) are the exception: run
by a pool thread or a Celery worker, they own their short transactions (``app.services.jobs.kinds``).
"""
