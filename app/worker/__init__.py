"""Scoring jobs and the pools that run them (embedded threads now; Celery workers run the same jobs)."""
