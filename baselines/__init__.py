"""Hosted baseline systems: task inputs in, a submission in the task's format out (pure)."""
