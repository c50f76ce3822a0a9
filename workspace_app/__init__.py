"""The core of the workspace app: the `App` (app.py) and the packages it is built from (see app.py).

Offline means offline: onnxruntime (loaded by pymupdf's layout models and by our ONNX embedder) sends usage
events to mobile.events.data.microsoft.com and keeps a device id under ~/.cache/Microsoft unless told not to.
Entry points turn every library's telemetry off (adapters/process.py); this covers any other importer (the
benchmarks, a notebook) before our modules can load onnxruntime.
"""

import os

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
