"""Plain data only (documents, answers, graph): the one part of the core that storage may import."""
