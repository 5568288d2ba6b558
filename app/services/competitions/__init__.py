"""Competitions: putting them online, finding their tasks and phases, taking part, the files anyone
may download, the organizers' archive of a phase, and the example competitions of ``podium demo``."""
