"""Sentence embeddings: the embedder with its cache, the torch/onnx backends, and the priority lock for queries."""
