# Two commands matter: `make run` (start the app) and `make test` (run every test).
# `make setup` is what both depend on; it is idempotent and fast once the stamp is fresh.

VENV    := .venv
PYTHON  := $(VENV)/bin/python
PIP     := $(VENV)/bin/pip
STAMP   := $(VENV)/.setup-stamp
# torch first: pip.conf points at local wheel dirs that hold the CPU build (see ../shared/STACK.md).
TORCH   := torch==2.13.0
BROWSER_PACKAGES := chromium chromium-driver fonts-wqy-microhei

.PHONY: setup run test browser-deps

setup: $(STAMP) browser-deps

$(STAMP): pyproject.toml
	@test -x $(PYTHON) || python3 -m venv $(VENV)
	$(PIP) install $(TORCH)
	$(PIP) install -e '.[dev]'
	@touch $(STAMP)

# Chromium is only needed by the browser tests; checked on every run because it lives outside the venv.
browser-deps:
	@if ! command -v chromium >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ]; then \
			apt-get update && apt-get install -y $(BROWSER_PACKAGES); \
		else \
			echo "chromium is missing (needed by the browser tests); install it with:"; \
			echo "  sudo apt-get update && sudo apt-get install -y $(BROWSER_PACKAGES)"; \
		fi; \
	fi

run: setup
	$(VENV)/bin/workspace-app serve

test: setup
	$(PYTHON) -m pytest -q
