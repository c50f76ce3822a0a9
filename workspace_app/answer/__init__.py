"""Answers built only from a workspace's sources: evidence blocks, answerers, citation checks, languages."""
