# Two commands matter: `make run` (start the app) and `make test` (run every test); `make test-fast` leaves out the
# slow end-to-end tests (processes, browser, kills) for a quick check while editing.
# `make setup` is what both depend on; it is idempotent and fast once the stamp is fresh.

VENV    := .venv
PYTHON  := $(VENV)/bin/python
PIP     := $(VENV)/bin/pip
STAMP   := $(VENV)/.setup-stamp
# torch first: pip.conf points at local wheel dirs that hold the CPU build (see ../shared/STACK.md).
TORCH   := torch==2.13.0
# System packages the tests drive: Chromium (browser tests), redis-server (the Redis queue backend) and PostgreSQL
# (the PostgreSQL catalog: the tests run initdb + pg_ctl from /usr/lib/postgresql/*/bin on a throwaway cluster).
SYSTEM_PACKAGES := chromium chromium-driver fonts-wqy-microhei redis-server postgresql

.PHONY: setup run test test-fast system-deps

setup: $(STAMP) system-deps

$(STAMP): pyproject.toml
	@test -x $(PYTHON) || python3 -m venv $(VENV)
	$(PIP) install $(TORCH)
	$(PIP) install -e '.[dev]'
	@touch $(STAMP)

# Only the tests need these; checked on every run because they live outside the venv.
system-deps:
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v redis-server >/dev/null 2>&1 \
		|| ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ]; then \
			apt-get update && apt-get install -y $(SYSTEM_PACKAGES); \
		else \
			echo "chromium, redis-server or postgresql is missing (needed by the browser, Redis queue and PostgreSQL"; \
			echo "catalog tests); install them with:"; \
			echo "  sudo apt-get update && sudo apt-get install -y $(SYSTEM_PACKAGES)"; \
		fi; \
	fi

run: setup
	$(VENV)/bin/workspace-app serve

test: setup
	$(PYTHON) -m pytest -q

test-fast: setup
	$(PYTHON) -m pytest -q -m "not slow"
