"""Which chunks keyword search returns, as one SQL condition both catalogs use (chunks `c` joined to documents
`d`): every chunk of a ready document, and the provisional passages of a running one (the pages OCR has read so
far: ingest/provisional.py). A running document's other chunks (left by an earlier try) stay out."""

from workspace_app.models.documents import PROVISIONAL

SEARCHABLE = f"(d.status = 'ready' OR (d.status = 'running' AND c.kind = '{PROVISIONAL}'))"
