"""Plain data only (documents, answers, graph, evaluation reports): the one part of the core that storage may import."""
