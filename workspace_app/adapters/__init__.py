"""Adapters around the core: the wiring (Settings -> backends -> App), the CLI, the worker and the supervisor."""
