"""UI adapter: the Streamlit server of `workspace-app serve`, started only once its App is built and warm.

`python -m workspace_app.adapters.ui APP_SCRIPT [streamlit flags...]` builds the App through the same cached
function the pages use (`components.application.current_app`, an `st.cache_resource`, shared by every session
of this process), warms it (`App.warm_up`: models loaded, one answer per workspace), and only then runs
`streamlit run`. The health endpoint the supervisor waits for answers after that, so when `serve` reports ready
the first question is answered as fast as the ones after it.
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path

log = logging.getLogger("workspace_app.ui")


def warm_app(script: Path) -> None:
    """Build the UI's App (cached for the sessions to come) and warm it; a failure is left to the first page."""
    sys.path.insert(0, str(script.parent))
    from components.application import current_app

    started = time.monotonic()
    try:
        timings = current_app().warm_up()
    except Exception:  # the page shows the problem to the user as it did before warm starts
        log.exception("warming the application failed")
        return
    steps = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in timings.items())
    print(f"workspace UI warm after {time.monotonic() - started:.1f} s ({steps})", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    """Warm the App, then hand the process to `streamlit run APP_SCRIPT flags...`."""
    args = list(sys.argv[1:] if argv is None else argv)
    script = Path(args[0]).resolve()
    warm_app(script)
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", str(script), *args[1:]]
    cli.main()  # exits with streamlit's status
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
