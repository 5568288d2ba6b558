"""Jobs and what runs them: the embedded pool's threads, or Celery workers (the same job functions)."""
