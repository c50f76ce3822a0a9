"""Backends behind the small protocols of workspace_app/storage/base.py: SQLite (sqlite/), Chroma, files and the job queue."""
