"""Faster inference backends for the embedder: the transformer run by onnxruntime, in fp32 or int8.

The SentenceTransformer stays as loaded (tokenizer, truncation, pooling, normalisation); only its inner
transformer is swapped for a module that runs an ONNX export of the same weights. The export is made once, at
first use, into `export_dir` under a name that fingerprints the weights, the backend and the library versions,
so a changed model or library never reuses a stale file and nothing is downloaded.

- `onnx`: the fp32 export with onnxruntime's BERT fusions (attention, GELU, layer norms): the same vectors.
- `onnx-int8`: that graph with its weight matrices quantised to int8 per output channel, all but the
  feed-forward down-projections (`_down_projections`), by `onnxruntime.quantization.quantize_dynamic`;
  activations are quantised per tensor at run time.
  SEE: https://onnxruntime.ai/docs/performance/model-optimizations/quantization.html
  Measured on the guideline chunks in bench/README.md ("Embedder throughput").
"""

from __future__ import annotations

import copy
import hashlib
import logging
import os
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch

Backend = Literal["torch", "onnx", "onnx-int8"]

# Bumped when the export recipe changes, so older files are not reused.
_EXPORT_VERSION = 1
# Model types whose graph onnxruntime's BERT fusions understand; others run with the generic optimisations.
_FUSABLE = {"bert": "bert"}
_PROBES = ["Syncope is a transient loss of consciousness.", "心房颤动的急诊处理", "Statins lower LDL cholesterol."]
# Cosine between an export's and torch's vectors on the probes below which the export is refused.
_MIN_COSINE = {"onnx": 0.999, "onnx-int8": 0.95}


def default_export_dir() -> Path:
    """The user's cache folder for exported models (`$XDG_CACHE_HOME/workspace-app/onnx`)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "workspace-app" / "onnx"


def apply_backend(model: Any, backend: Backend, export_dir: Path) -> None:
    """Swap the SentenceTransformer's transformer for `backend` (in place; `torch` leaves it as it is)."""
    if backend == "torch":
        return
    transformer = model[0]
    path = export_model(transformer.model, model.tokenizer, backend, export_dir)
    reference = _encode(model, _PROBES)
    transformer.model = OnnxTransformer(path, transformer.model.config)
    cosine = float(np.min(np.sum(reference * _encode(model, _PROBES), axis=1)))
    if cosine < _MIN_COSINE[backend]:
        raise RuntimeError(f"the {backend} export of the embedder disagrees with torch (cosine {cosine:.3f})")


def _encode(model: Any, texts: list[str]) -> np.ndarray:
    return np.asarray(model.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False))


def export_model(hf_model: Any, tokenizer: Any, backend: Backend, export_dir: Path) -> Path:
    """The ONNX file for `backend`, exported (and quantised) now unless an identical one is there."""
    fingerprint = _fingerprint(hf_model)
    fp32 = export_dir / f"{fingerprint}-onnx.onnx"
    int8 = export_dir / f"{fingerprint}-onnx-int8.onnx"
    # Tracing and quantising warn about things that do not apply here (Python control flow traced as constants
    # for shapes that are dynamic axes anyway); the probe check in apply_backend is what guards the export.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if not fp32.exists():
            _write_atomically(fp32, lambda target: _export_fp32(hf_model, tokenizer, target))
        if backend == "onnx-int8" and not int8.exists():
            _write_atomically(int8, lambda target: _quantize(fp32, target))
    return fp32 if backend == "onnx" else int8


def _fingerprint(hf_model: Any) -> str:
    import onnxruntime

    digest = hashlib.sha256(f"{_EXPORT_VERSION}|{torch.__version__}|{onnxruntime.__version__}".encode())
    digest.update(hf_model.config.to_json_string().encode())
    for name, tensor in sorted(hf_model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()[:20]


def _write_atomically(target: Path, write: Callable[[Path], None]) -> None:
    # Two processes (the app and a worker) may export at once: each writes its own file, the last rename wins.
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=target.parent, suffix=".onnx.part")
    os.close(handle)
    try:
        write(Path(name))
        os.chmod(name, 0o644)  # mkstemp makes it private; an export is as readable as the model it came from
        os.replace(name, target)
    finally:
        Path(name).unlink(missing_ok=True)


class _LastHiddenState(torch.nn.Module):
    """Wraps a Hugging Face model so that positional ONNX inputs map to its keyword arguments."""

    def __init__(self, hf_model: Any, names: list[str]) -> None:
        super().__init__()
        self.hf_model = hf_model
        self.names = names

    def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
        """The last hidden state."""
        return self.hf_model(**dict(zip(self.names, tensors, strict=True))).last_hidden_state  # type: ignore[no-any-return]


def _export_fp32(hf_model: Any, tokenizer: Any, target: Path) -> None:
    # Eager attention exports the pattern onnxruntime fuses into one Attention node (SDPA's export does not).
    eager = copy.deepcopy(hf_model).eval()
    eager.set_attn_implementation("eager")
    sample = tokenizer(["a short probe", "a longer probe sentence for the export"], padding=True, return_tensors="pt")
    names = [name for name in tokenizer.model_input_names if name in sample]
    axes = {name: {0: "batch", 1: "sequence"} for name in [*names, "last_hidden_state"]}
    with torch.no_grad():
        torch.onnx.export(
            _LastHiddenState(eager, names), tuple(sample[name] for name in names), str(target), input_names=names,
            output_names=["last_hidden_state"], dynamic_axes=axes, opset_version=17, dynamo=False,
        )
    fusion = _FUSABLE.get(hf_model.config.model_type)
    if fusion:
        from onnxruntime.transformers.optimizer import optimize_model

        config = hf_model.config
        fused = optimize_model(
            str(target), model_type=fusion, num_heads=config.num_attention_heads, hidden_size=config.hidden_size,
            opt_level=1,
        )
        fused.save_model_to_file(str(target))


def _quantize(fp32: Path, target: Path) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # The quantiser logs a hint to run its shape-inference pre-processing on the root logger; DefaultTensorType
    # stands in for that inference here, so the hint would only show up in the CLI's progress output.
    hint = _DropMessage("pre-processing before quantization")
    logging.getLogger().addFilter(hint)
    try:
        quantize_dynamic(
            str(fp32), str(target), weight_type=QuantType.QInt8, per_channel=True,
            nodes_to_exclude=_down_projections(onnx.load(str(fp32))),
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
    finally:
        logging.getLogger().removeFilter(hint)


class _DropMessage(logging.Filter):
    """Drops log records whose message contains a phrase."""

    def __init__(self, phrase: str) -> None:
        super().__init__()
        self.phrase = phrase

    def filter(self, record: logging.LogRecord) -> bool:
        """False for the records to drop."""
        return self.phrase not in record.getMessage()


def _down_projections(graph_model: Any) -> list[str]:
    """MatMul nodes whose weight narrows its input (the feed-forward output of each layer).

    Their input comes out of GELU with a few large outliers, so one int8 scale per tensor loses most there.
    Keeping them fp32 raised the cosine to torch's vectors on 1,333 dev chunks from 0.992 / 0.970 (mean / min) to
    0.996 / 0.981 and the dev top-10 agreement from 0.90 to 0.93, for less speed (2.3x to 1.75x torch's,
    measured back to back); bench/README.md has the final figures.
    """
    shapes = {init.name: list(init.dims) for init in graph_model.graph.initializer}
    return [
        node.name for node in graph_model.graph.node
        if node.op_type == "MatMul" and len(shape := shapes.get(node.input[1], [])) == 2 and shape[0] > shape[1]
    ]


class OnnxTransformer(torch.nn.Module):
    """Stands in for the Hugging Face model inside the SentenceTransformer: same inputs, same output."""

    def __init__(self, path: Path, config: Any) -> None:
        import onnxruntime

        super().__init__()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = torch.get_num_threads()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.inputs = [item.name for item in self.session.get_inputs()]
        self.config = config

    def forward(self, **features: Any) -> dict[str, Any]:
        """The last hidden state for tokenised inputs (torch tensors in, a torch tensor out)."""
        feeds = {name: features[name].cpu().numpy().astype(np.int64) for name in self.inputs}
        (hidden,) = self.session.run(["last_hidden_state"], feeds)
        return {"last_hidden_state": torch.from_numpy(hidden)}
