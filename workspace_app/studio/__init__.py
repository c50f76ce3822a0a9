"""Studio outputs: documents built from a workspace's sources, every statement cited (FAQ, briefing, study guide)."""
