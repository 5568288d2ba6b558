"""Podium's application: the only package that knows HTTP, SQL, queues and the file system layout."""
