"""What runs the jobs: the embedded pool (threads of the server), or Celery workers, and the sweeper
that resumes jobs in both modes. What a job does is declared with its domain in ``app.services``."""
