"""Fixtures for the end-to-end tests: the pinned Claude Code CLI, run offline against the scripted model server.

Every test under tests/e2e is marked ``e2e``. The CLI is installed by ``tests/e2e/install_claude.sh`` (``make e2e``
runs it); without it these tests skip. HOME isolation and the ``repo`` fixture come from tests/conftest.py.

A test picks its scenario with ``@pytest.mark.scenario([...episodes...])`` and gets it served by ``server``;
``claude_env`` is the environment that points the CLI at that server, and ``run_claude`` runs the CLI with it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from dun.agents.versions import TESTED

from .model_server import ModelServer

HERE = Path(__file__).resolve().parent

CLAUDE_VERSION = TESTED["claude"].version
CLAUDE_DIR = HERE / ".cache" / f"claude-{CLAUDE_VERSION}"
CLAUDE_BIN = CLAUDE_DIR / "node_modules" / ".bin" / "claude"
DEFAULT_SCENARIO: list[list[dict[str, Any]]] = [[{"text": "done"}]]
# Inherited variables that would steer the CLI elsewhere (another endpoint, key, model or config dir, a proxy).
STRIPPED_PREFIXES = ("ANTHROPIC_", "CLAUDE", "OTEL_")
STRIPPED_NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "scenario(episodes): the model server's scenario for this test")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # tryfirst: the mark must be on the items before `-m e2e` / `-m "not e2e"` selects among them.
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """The pinned Claude Code binary, or a skip saying how to get it."""
    override = os.environ.get("DUN_E2E_CLAUDE_BIN")
    path = Path(override) if override else CLAUDE_BIN
    if override and not path.exists():
        pytest.skip(f"DUN_E2E_CLAUDE_BIN={override} does not exist")
    if not path.exists():
        if shutil.which("npm") is None:
            pytest.skip(f"npm is missing: cannot install @anthropic-ai/claude-code@{CLAUDE_VERSION} for the e2e tests")
        pytest.skip(f"Claude Code {CLAUDE_VERSION} is not installed: run `bash tests/e2e/install_claude.sh`")
    try:
        out = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"{path} does not run: {exc}")
    if out.returncode != 0:
        pytest.skip(f"{path} --version failed: {out.stderr.strip()[:300]}")
    if not override and not out.stdout.startswith(CLAUDE_VERSION):
        pytest.skip(f"{path} is {out.stdout.strip()!r}, not the pinned {CLAUDE_VERSION}: rerun install_claude.sh")
    return path


@pytest.fixture
def scenario(request: pytest.FixtureRequest) -> list[list[dict[str, Any]]]:
    """The episodes from the test's ``scenario`` mark, or one episode answering "done"."""
    mark = request.node.get_closest_marker("scenario")
    return list(mark.args[0]) if mark else DEFAULT_SCENARIO


@pytest.fixture
def model_server(tmp_path: Path) -> Iterator[Callable[[list[list[dict[str, Any]]]], ModelServer]]:
    """A factory: ``model_server(scenario)`` starts a server that is stopped when the test ends.

    Every server logs full request bodies to ``tmp_path/model-requests-N.jsonl`` and dumps its request records to
    ``tmp_path/model-records-N.json`` at the end, for reading after a failure.
    """
    servers: list[ModelServer] = []

    def start(episodes: list[list[dict[str, Any]]]) -> ModelServer:
        n = len(servers)
        server = ModelServer(episodes, body_log=tmp_path / f"model-requests-{n}.jsonl").start()
        servers.append(server)
        return server

    yield start
    for n, server in enumerate(servers):
        server.stop()
        server.dump(tmp_path / f"model-records-{n}.json")


@pytest.fixture
def server(scenario: list[list[dict[str, Any]]],
           model_server: Callable[[list[list[dict[str, Any]]]], ModelServer]) -> ModelServer:
    """A model server playing this test's scenario."""
    return model_server(scenario)


def make_claude_env(home: Path, server: ModelServer, **extra: str) -> dict[str, str]:
    """An environment for the CLI: private HOME, the loopback server, a dummy key, no side traffic, few retries."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(STRIPPED_PREFIXES) and k not in STRIPPED_NAMES}
    env.update({
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "dummy",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": "1",
        "DISABLE_AUTOUPDATER": "1",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        "TERM": "dumb",
    })
    if os.geteuid() == 0:
        env["IS_SANDBOX"] = "1"  # the CLI refuses --dangerously-skip-permissions as root otherwise
    env.update(extra)
    return env


@pytest.fixture
def claude_env(isolated_home: Path, server: ModelServer) -> dict[str, str]:
    """The CLI's environment for this test's ``server``; HOME is the fresh temporary home that tests/conftest.py's
    autouse ``isolated_home`` fixture made for this test."""
    return make_claude_env(isolated_home, server)


@dataclass
class ClaudeRun:
    """One finished ``claude -p`` process."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def result(self) -> dict[str, Any]:
        """The result object: the whole stdout for ``json``, the last ``result`` event for ``stream-json``."""
        if self.events:
            results = [e for e in self.events if e.get("type") == "result"]
            assert results, f"no result event in {self.stdout[-2000:]!r}"
            return results[-1]
        try:
            data = json.loads(self.stdout)
        except json.JSONDecodeError as exc:
            tail = f"stdout: {self.stdout[-2000:]!r} stderr: {self.stderr[-2000:]!r}"
            raise AssertionError(f"the CLI's stdout is not JSON; {tail}") from exc
        assert isinstance(data, dict)
        return data


@pytest.fixture
def run_claude(claude_bin: Path, claude_env: dict[str, str], repo: Path) -> Callable[..., ClaudeRun]:
    """``run_claude(prompt, *extra_args, output_format="json", cwd=repo, env=None, timeout=60)`` runs
    ``claude -p PROMPT --output-format F --dangerously-skip-permissions`` with stdin closed."""

    def run(prompt: str, *extra: str, output_format: str = "json", cwd: Path | None = None,
            env: dict[str, str] | None = None, timeout: float = 60) -> ClaudeRun:
        args = [str(claude_bin), "-p", prompt, "--output-format", output_format, "--dangerously-skip-permissions",
                *extra]
        if output_format == "stream-json" and "--verbose" not in extra:
            args.append("--verbose")
        started = time.monotonic()
        proc = subprocess.run(args, cwd=cwd or repo, env={**claude_env, **(env or {})}, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout)
        events = []
        if output_format == "stream-json":
            events = [json.loads(line) for line in proc.stdout.splitlines() if line.strip().startswith("{")]
        return ClaudeRun(args, proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started, events)

    return run
