"""What a results file records about the run: the git commit and the machine."""

from __future__ import annotations

import functools
import os
import platform
import subprocess
from typing import Any

from bench.common.paths import REPO


@functools.lru_cache(maxsize=1)
def git_info() -> dict[str, Any]:
    """The commit, and whether the core (workspace_app/, storage included) has uncommitted changes."""

    def run(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return ""

    dirty = run("status", "--porcelain", "--", "workspace_app")
    return {"commit": run("rev-parse", "HEAD") or None, "core_dirty": bool(dirty)}


def machine_info() -> dict[str, Any]:
    import torch

    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {
        "cpu_count": os.cpu_count(),
        "cpus_usable": affinity,
        "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
    }
