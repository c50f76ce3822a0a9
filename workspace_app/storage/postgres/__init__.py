"""The catalog on PostgreSQL (chosen by `WORKSPACE_CATALOG__URL=postgresql://...`), beside storage/sqlite/."""
