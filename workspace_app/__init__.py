"""The core of the workspace app: the `App` (app.py) and the packages it is built from (see app.py)."""
