"""SQLite: one connection owner (database.py), the repositories over it, and the catalog that groups them."""
