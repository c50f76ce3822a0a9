"""A sentence-transformers model folder that only mean-pools and normalises, run without sentence-transformers.

The default model, all-MiniLM-L6-v2, is a BERT encoder followed by mean pooling over its tokens and a
normalisation to unit length. Loading it through sentence-transformers costs a process ~5 s before its first
vector, most of it imports (torch, transformers, then the library's training and evaluation modules): paid by
every `ask`, `search` and `eval` (the server's warm-up still loads torch before it is ready). Two runners of the
same steps on the same weights, with the library's tokenizer settings (text stripped, truncation at the folder's
`max_seq_length`):

- `MeanPooledModel`: torch through transformers, batches sorted by length as the library sorts them: passages.
- `NumpyBert`: the BERT forward pass in numpy, one text at a time (~0.3 s to load, ~16 ms a question): the
  questions and the few sentences an answer embeds, so a process that only answers never imports torch. Weights of
  another architecture are left to torch (`for_folder`).

Both agree with the library's vectors within 2e-7 (tests/embedding/test_mean_pooled.py). A folder with any other
module, pooling, prompt or tokenizer option is loaded by sentence-transformers as before (`is_plain_mean_pooled`
says which), and so is every other backend than torch.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

_MODULES = (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"])
_MODEL_OPTIONS = {"max_seq_length", "do_lower_case"}


def is_plain_mean_pooled(folder: Path) -> bool:
    """Whether a local sentence-transformers folder is a transformer, mean pooling and at most a normalisation,
    with no prompts, lower-casing or tokenizer and model arguments of its own."""
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        if [module["type"].rsplit(".", 1)[-1] for module in modules] not in _MODULES or modules[0]["path"]:
            return False
        pooling = json.loads((folder / modules[1]["path"] / "config.json").read_text(encoding="utf-8"))
        options = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
        described = folder / "config_sentence_transformers.json"
        library = json.loads(described.read_text(encoding="utf-8")) if described.exists() else {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False
    modes = {name for name, on in pooling.items() if name.startswith("pooling_mode") and on}
    return (
        modes == {"pooling_mode_mean_tokens"}
        and not set(options) - _MODEL_OPTIONS
        and isinstance(options.get("max_seq_length"), int)
        and not options.get("do_lower_case")
        and not library.get("prompts")
        and not library.get("default_prompt_name")
    )


class MeanPooledModel:
    """The part of SentenceTransformer's interface the embedder calls, for a plain mean-pooled folder."""

    def __init__(self, folder: Path, device: str = "cpu") -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        self._torch = torch
        options = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
        self.max_seq_length: int = options["max_seq_length"]
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder))
        self._model = AutoModel.from_pretrained(str(folder)).to(device).eval()
        self._device = device

    def get_sentence_embedding_dimension(self) -> int:
        """Length of the vectors."""
        return int(self._model.config.hidden_size)

    def encode(self, texts: Sequence[str], batch_size: int = 32, **_: Any) -> np.ndarray:
        """Unit vectors (len(texts), dimension): longest texts first, `batch_size` to a forward pass, as
        sentence-transformers batches them (the same padding, so the same numbers)."""
        if not texts:
            return np.zeros((0, self.get_sentence_embedding_dimension()), dtype=np.float32)
        order = np.argsort([-len(text) for text in texts], kind="stable")
        out = np.empty((len(texts), self.get_sentence_embedding_dimension()), dtype=np.float32)
        with self._torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                ids = order[start : start + batch_size]
                out[ids] = self._forward([texts[i].strip() for i in ids])
        return out

    def _forward(self, texts: list[str]) -> np.ndarray:
        batch = self.tokenizer(
            texts, padding=True, truncation="longest_first", max_length=self.max_seq_length, return_tensors="pt",
        ).to(self._device)
        tokens = self._model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(tokens.dtype)
        pooled = (tokens * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        return self._torch.nn.functional.normalize(pooled, p=2, dim=1).cpu().numpy()  # type: ignore[no-any-return]


class NumpyBert:
    """A plain mean-pooled BERT folder's forward pass in numpy, one text at a time (a question, a sentence).

    SEE: Devlin et al., "BERT", NAACL 2019 (post-norm layers, exact GELU); the weight names are transformers'
    `BertModel`'s."""

    def __init__(self, folder: Path, config: dict[str, Any]) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        options = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
        self.folder = folder
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.enable_truncation(options["max_seq_length"])
        self._tokenizer.no_padding()
        raw = load_file(str(folder / "model.safetensors"))
        weights = {name.removeprefix("bert."): value.astype(np.float32, copy=False) for name, value in raw.items()}
        self._heads = int(config["num_attention_heads"])
        self._eps = float(config["layer_norm_eps"])
        self._embeddings = (weights["embeddings.word_embeddings.weight"], weights["embeddings.position_embeddings.weight"],
                            weights["embeddings.token_type_embeddings.weight"],
                            weights["embeddings.LayerNorm.weight"], weights["embeddings.LayerNorm.bias"])
        self._layers = [_BertLayer(weights, f"encoder.layer.{i}.") for i in range(int(config["num_hidden_layers"]))]
        self.dimension = int(config["hidden_size"])

    @classmethod
    def for_folder(cls, folder: Path) -> NumpyBert | None:
        """The encoder of a plain mean-pooled folder holding BERT weights in safetensors, else None."""
        try:
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        plain_bert = (
            config.get("model_type") == "bert" and config.get("hidden_act") == "gelu"
            and config.get("position_embedding_type", "absolute") == "absolute"
            and (folder / "model.safetensors").exists() and (folder / "tokenizer.json").exists()
        )
        return cls(folder, config) if plain_bert and is_plain_mean_pooled(folder) else None

    def encode_one(self, text: str) -> np.ndarray:
        """The text's unit vector (dimension,), computed on one BLAS thread: a short text's matrix products split
        over two threads wait for each other, and on 2 busy cores a question took 43 ms instead of 16 ms (the same
        reason as embedder.py's `one_query_thread`). BLAS's thread count is process-wide: texts take turns."""
        with _ONE_BLAS_THREAD:
            controller = _blas_controller()
            with controller.limit(limits=1, user_api="blas"):
                return self._forward(text)

    def _forward(self, text: str) -> np.ndarray:
        encoding = self._tokenizer.encode(text.strip())
        words, positions, types, scale, shift = self._embeddings
        ids = np.asarray(encoding.ids)
        hidden = words[ids] + positions[: len(ids)] + types[np.asarray(encoding.type_ids)]
        hidden = _layer_norm(hidden, scale, shift, self._eps)
        for layer in self._layers:
            hidden = layer(hidden, self._heads, self._eps)
        pooled = hidden.mean(axis=0)
        return (pooled / max(float(np.linalg.norm(pooled)), 1e-12)).astype(np.float32)  # type: ignore[no-any-return]


class _BertLayer:
    """One encoder layer: self-attention, then the feed-forward block, each added back and layer-normed."""

    def __init__(self, weights: dict[str, np.ndarray], prefix: str) -> None:
        def linear(name: str) -> tuple[np.ndarray, np.ndarray]:
            return np.ascontiguousarray(weights[f"{prefix}{name}.weight"].T), weights[f"{prefix}{name}.bias"]

        parts = [linear(f"attention.self.{name}") for name in ("query", "key", "value")]
        self.qkv = (np.concatenate([w for w, _ in parts], axis=1), np.concatenate([b for _, b in parts]))
        self.attention_out = linear("attention.output.dense")
        self.attention_norm = (weights[f"{prefix}attention.output.LayerNorm.weight"],
                               weights[f"{prefix}attention.output.LayerNorm.bias"])
        self.up, self.down = linear("intermediate.dense"), linear("output.dense")
        self.out_norm = weights[f"{prefix}output.LayerNorm.weight"], weights[f"{prefix}output.LayerNorm.bias"]

    def __call__(self, hidden: np.ndarray, heads: int, eps: float) -> np.ndarray:
        length, width = hidden.shape
        size = width // heads
        q, k, v = np.split(hidden @ self.qkv[0] + self.qkv[1], 3, axis=1)
        q, k, v = (m.reshape(length, heads, size).transpose(1, 0, 2) for m in (q, k, v))
        scores = q @ k.transpose(0, 2, 1) / np.float32(np.sqrt(size))
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        context = (scores / scores.sum(axis=-1, keepdims=True)) @ v
        attended = context.transpose(1, 0, 2).reshape(length, width) @ self.attention_out[0] + self.attention_out[1]
        hidden = _layer_norm(attended + hidden, *self.attention_norm, eps)
        up = hidden @ self.up[0] + self.up[1]
        up = up * np.float32(0.5) * (np.float32(1.0) + _erf(up / np.float32(np.sqrt(2.0))))
        return _layer_norm(up @ self.down[0] + self.down[1] + hidden, *self.out_norm, eps)


_ONE_BLAS_THREAD = threading.Lock()


@functools.cache
def _blas_controller() -> Any:
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def _layer_norm(x: np.ndarray, scale: np.ndarray, shift: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    variance = np.square(x - mean).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + np.float32(eps)) * scale + shift  # type: ignore[no-any-return]


# erfc(z) = t·exp(-z² + P(t)), t = 1 / (1 + z/2), z >= 0: fractional error below 1.2e-7 everywhere, under float32's
# resolution (4e-7 from scipy's erf at worst), without importing scipy (~0.5 s) for the exact GELU.
# SEE: Press et al., "Numerical Recipes in C", 2nd ed., section 6.2 (erfcc).
_ERFC = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807, -1.13520398, 1.48851587,
         -0.82215223, 0.17087277)


def _erf(x: np.ndarray) -> np.ndarray:
    z = np.abs(x)
    t = np.float32(1.0) / (np.float32(1.0) + np.float32(0.5) * z)
    polynomial = np.zeros_like(t)
    for coefficient in reversed(_ERFC):
        polynomial = np.float32(coefficient) + t * polynomial
    complement = t * np.exp(polynomial - z * z)
    return np.where(x >= 0, np.float32(1.0) - complement, complement - np.float32(1.0))  # type: ignore[no-any-return]
