"""Leaderboards: the candidates read from the stored scores, ranked per phase and class of viewer, and
the cache that serves each ranking until a result changes."""
