"""Documents of a workspace: adding and removing them, their state (lifecycle.py) and ingestion jobs (jobs.py)."""
