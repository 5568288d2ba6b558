"""Scoring: the parsed gold of each phase (cached per process) and the steps of a scoring job."""
