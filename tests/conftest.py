"""Shared fixtures: an isolated HOME for every test, and real git repositories in temporary directories."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from dun.config.sections import Agent, Settings

GIT_ENV = {
    "GIT_AUTHOR_NAME": "dun-test", "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "dun-test", "GIT_COMMITTER_EMAIL": "test@example.invalid",
}


def _ignore(signum: int, frame: object) -> None:
    """Does nothing: the suite keeps ignoring what it was started ignoring."""


def _handle_inherited_ignores() -> None:
    """A suite started ignoring SIGHUP or SIGINT (`nohup make test`, a script's background job) would hand that on
    to every process it starts, since an ignored signal stays ignored across exec, and dun keeps a signal it was
    started ignoring ignored: the tests that stop dun with SIGHUP or SIGINT would hang. The suite goes on ignoring
    them, by a handler that does nothing, and the processes it starts get them at their default, as from a
    terminal (a handled signal is reset by exec)."""
    for sig in (signal.SIGHUP, signal.SIGINT):
        if signal.getsignal(sig) == signal.SIG_IGN:
            signal.signal(sig, _ignore)


_handle_inherited_ignores()

HOME_VARS = (("XDG_CONFIG_HOME", ".config"), ("XDG_STATE_HOME", ".local/state"), ("XDG_CACHE_HOME", ".cache"),
             ("XDG_DATA_HOME", ".local/share"))


@pytest.fixture(scope="session", autouse=True)
def isolated_session_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Module- and session-scoped fixtures run before the per-test home below: give them one of their own, so
    nothing (a loop's shared call window, a cache) ever lands in the real $HOME."""
    home = tmp_path_factory.mktemp("session-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        for var, sub in HOME_VARS:
            mp.setenv(var, str(home / sub))
        for var, value in GIT_ENV.items():
            mp.setenv(var, value)
        mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
        yield home


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """No test may read or write the real $HOME: point HOME and the XDG dirs at a fresh directory."""
    real_home = os.environ.get("HOME")
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for var, sub in HOME_VARS:
        monkeypatch.setenv(var, str(home / sub))
    for var, value in GIT_ENV.items():
        monkeypatch.setenv(var, value)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("CLAUDECODE", raising=False)
    yield home
    assert os.environ.get("HOME") == str(home) or real_home is not None


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A real git repository with one commit and a clean tree."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "README.md", "# demo\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


@pytest.fixture
def plain_dir(tmp_path: Path) -> Path:
    """A directory that is not a git repository."""
    root = tmp_path / "plain"
    root.mkdir()
    return root


def agent_settings(**keys: object) -> Agent:
    """The default `agent:` section with `keys` changed (lists given as lists, as a config file has them)."""
    from dataclasses import replace

    from dun.config.loader import defaults_only

    return replace(defaults_only().settings.agent, **{k: tuple(v) if isinstance(v, list) else v
                                                      for k, v in keys.items()})


def settings_with(**keys: object) -> Settings:
    """The default settings with `SECTION__KEY=value` changed (lists given as lists, as a config file has them)."""
    from dun.config.loader import defaults_only

    return defaults_only().settings.with_flags({k.replace("__", "."): tuple(v) if isinstance(v, list) else v
                                                for k, v in keys.items()})
