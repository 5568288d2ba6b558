"""Leaderboards computed from stored scores and a phase's rules (pure: no I/O, no frameworks)."""
