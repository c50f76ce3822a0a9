"""The shared language layer: CJK ranges, the index analyzer, sentences, terms, abbreviations, the COR/LOE grammar
and language detection.

A leaf package: the feature packages (ingest, retrieval, graph, answer) import it, it imports none of them.
"""
