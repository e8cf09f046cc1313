"""Cache truth for the files outside the work tree that choose or configure a toolchain (third cache-truth pass;
dun/core/toolfiles.py): `go env -w` writing `$GOENV`, a version manager's shim choosing by the `.tool-versions` of
the home directory or of a directory above the project, a `.cargo/config.toml` above the project. PATH names the same
program before and after, git sees nothing. A cached run is compared with a run with every cache off."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write
from test_cache_classes import OLD_NS, age, commit, result

from dun.engine.model import Status


def agree(repo: Path, check: str) -> Status:
    cached, fresh = result(repo, check), result(repo, check, fresh=True)
    assert (cached.status, cached.signal) == (fresh.status, fresh.signal)
    return cached.status


def dated(path: Path) -> None:
    """The changed file alone dated back (outside the racy window): aging more would change the programs' ctime."""
    import os

    os.utime(path, ns=(OLD_NS, OLD_NS))


def program(bin_dir: Path, name: str, script: str) -> None:
    path = write(bin_dir, name, "#!/bin/sh\n" + script)
    path.chmod(0o755)


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory of stand-in toolchain programs first on PATH, and a home and config directory of the test's."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("GOENV", "CARGO_HOME", "RUSTUP_HOME", "ASDF_DEFAULT_TOOL_VERSIONS_FILENAME", "MISE_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    return bin_dir


def test_go_env_w_is_seen_by_a_check_that_requires_go(repo: Path, tools: Path, tmp_path: Path) -> None:
    # as the real go: GOFLAGS from the environment, else from the file `go env -w` writes
    program(tools, "go", 'grep -q "tags=bad" "${GOENV:-$XDG_CONFIG_HOME/go/env}" 2>/dev/null && exit 1; exit 0\n')
    commit(repo, "  - {id: gotest, type: command, command: 'go test ./...', requires: [go], inputs: {}}\n")
    age(tmp_path)
    assert result(repo, "gotest").status is Status.PASS
    assert result(repo, "gotest").cached
    dated(write(tmp_path, "config/go/env", "GOFLAGS=-tags=bad\n"))  # `go env -w GOFLAGS=-tags=bad`
    assert agree(repo, "gotest") is Status.FAIL


@pytest.mark.parametrize("where", ["home", "above"])
def test_a_version_managers_shim_choosing_by_tool_versions(repo: Path, tools: Path, tmp_path: Path,
                                                           where: str) -> None:
    """asdf's `node` shim: the nearest `.tool-versions` (the project's directory, any directory above, the home
    directory) picks the version; the declared program is the same shim throughout."""
    program(tools, "node", 'd=$PWD; while [ "$d" != / ] && [ ! -f "$d/.tool-versions" ]; do d=$(dirname "$d"); done\n'
            'f="$d/.tool-versions"; [ -f "$f" ] || f="$HOME/.tool-versions"\n'
            'grep -q "nodejs 18" "$f" 2>/dev/null && exit 1; exit 0\n')
    write(tmp_path, "home/.tool-versions", "nodejs 20\n")
    commit(repo, "  - {id: js, type: command, command: node, inputs: {programs: [node]}}\n")
    age(tmp_path)
    assert result(repo, "js").status is Status.PASS
    assert result(repo, "js").cached
    dated(write(tmp_path / "home" if where == "home" else tmp_path, ".tool-versions", "nodejs 18\n"))
    assert agree(repo, "js") is Status.FAIL


def test_a_cargo_config_above_the_project(repo: Path, tools: Path, tmp_path: Path) -> None:
    program(tools, "cargo", 'grep -q "CT=bad" ../.cargo/config.toml 2>/dev/null && exit 1; exit 0\n')
    commit(repo, "  - {id: rs, type: command, command: 'cargo test', requires: [cargo], inputs: {}}\n")
    age(tmp_path)
    assert result(repo, "rs").status is Status.PASS
    assert result(repo, "rs").cached
    dated(write(tmp_path, ".cargo/config.toml", "[env]\nCT=bad\n"))
    assert agree(repo, "rs") is Status.FAIL
