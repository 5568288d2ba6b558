"""Persistence: SQLAlchemy models, the engine and session factory, and the blob store."""
