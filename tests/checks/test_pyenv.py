"""Which Python `{python}` stands for: the project's environment before whatever python3 is on PATH."""

from __future__ import annotations

from pathlib import Path

import pytest
from checks_support import write

from dun.checks.pyenv import Python, project_python, setup_hint


def executable(path: Path) -> Path:
    write(path.parent, path.name, "#!/bin/sh\nexit 0\n").chmod(0o755)
    return path


@pytest.fixture
def bare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project and a PATH with no environment manager on it."""
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    (tmp_path / "bin").mkdir()
    root = tmp_path / "project"
    root.mkdir()
    return root


def test_plain_python3_when_the_project_has_no_environment(bare: Path) -> None:
    assert project_python(bare) == Python(("python3",), "PATH")


@pytest.mark.parametrize("name", [".venv", "venv"])
def test_a_virtual_environment_in_the_repository_comes_first(bare: Path, monkeypatch: pytest.MonkeyPatch,
                                                             name: str) -> None:
    executable(bare / name / "bin" / "python")
    other = executable(bare.parent / "active" / "bin" / "python")
    monkeypatch.setenv("VIRTUAL_ENV", str(other.parent.parent))
    assert project_python(bare) == Python((f"{name}/bin/python",), name)


def test_a_sub_directory_command_finds_the_environment_of_its_own_directory(bare: Path) -> None:
    executable(bare / "svc" / ".venv" / "bin" / "python")
    executable(bare / ".venv" / "bin" / "python")
    assert project_python(bare, bare / "svc").argv == (".venv/bin/python",)
    assert project_python(bare, bare / "web").argv == (str(bare / ".venv/bin/python"),)


def test_the_activated_environment_next(bare: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    active = executable(bare.parent / "active" / "bin" / "python")
    monkeypatch.setenv("VIRTUAL_ENV", str(active.parent.parent))
    assert project_python(bare) == Python((str(active),), "VIRTUAL_ENV")


@pytest.mark.parametrize(("tool", "marker", "text"), [
    ("uv", "uv.lock", ""), ("uv", "pyproject.toml", "[tool.uv]\ndev-dependencies = []\n"),
    ("poetry", "poetry.lock", ""), ("poetry", "pyproject.toml", "[tool.poetry]\nname = 'x'\n"),
    ("hatch", "hatch.toml", ""), ("hatch", "pyproject.toml", "[tool.hatch.envs.default]\n"),
])
def test_an_environment_manager_the_project_uses_when_it_is_installed(bare: Path, tool: str, marker: str,
                                                                      text: str) -> None:
    write(bare, marker, text)
    assert project_python(bare).argv == ("python3",)  # used by the project, but not installed here
    executable(bare.parent / "bin" / tool)
    assert project_python(bare).argv == (tool, "run", "python")


def test_setup_hints_name_the_environment(bare: Path) -> None:
    assert "`uv sync`" in setup_hint(Python(("uv", "run", "python"), "uv.lock"), "pytest")
    assert "python3 -m venv .venv" in setup_hint(Python(("python3",), "PATH"), "pytest")
    assert setup_hint(Python((".venv/bin/python",), ".venv"), "pytest") == (
        "Install pytest into the project's environment: `.venv/bin/python -m pip install pytest`, then re-run.")
