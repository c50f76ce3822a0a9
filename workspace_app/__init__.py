"""The core of the workspace app: the `App` (app.py) and the packages it is built from (see app.py).

Offline means offline: onnxruntime (loaded by pymupdf's layout models and by our ONNX embedder) sends usage
events to mobile.events.data.microsoft.com and keeps a device id under ~/.cache/Microsoft unless told not to.
This is set before any of our modules can load it, for this process and every process it starts.
"""

import os

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
