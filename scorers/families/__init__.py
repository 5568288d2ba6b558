"""Reusable metric families: a new task reuses one with its own format adapter and options."""
