"""Compute workers that organizers bring: a competition's own queue, its credentials, and the protocol its remote
workers speak (``queues``, ``protocol``, ``links``)."""
