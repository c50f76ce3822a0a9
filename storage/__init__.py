"""Backends behind the small protocols of storage/base.py: SQLite (sqlite/), Chroma, files and the job queue."""
