"""Finding evidence: the scope of a question, hybrid search (dense + BM25, fused, reranked), query modes, routing."""
