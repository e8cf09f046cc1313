from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import write

from dun.core.errors import ConfigError
from dun.engine.catalog import load_catalog
from dun.engine.session import open_session

ONE = """\
id: {id}
priority: {priority}
checks:
  - id: {check}
    type: files
    rule: path-exists
    paths: [README.md]
"""


def test_repo_manifest_found_from_a_subdirectory(repo: Path) -> None:
    write(repo, ".dun/plugins/mine.yaml", ONE.format(id="mine", priority=5, check="readme"))
    sub = repo / "deep" / "er"
    sub.mkdir(parents=True)
    session = open_session(sub)
    assert session.root == repo.resolve()
    assert session.catalog().find("readme") is not None


def test_layers_override_by_id_builtin_user_repo(repo: Path, isolated_home: Path) -> None:
    write(isolated_home / ".config", "dun/plugins/git.yaml", ONE.format(id="git", priority=1, check="user-git"))
    session = open_session(repo)
    git = session.catalog().manifest("git")
    assert git.origin == "user"
    assert [c.id for c in git.checks] == ["user-git"]
    assert git.overrides[0].endswith("plugins/git.yaml")

    write(repo, ".dun/plugins/git.yaml", ONE.format(id="git", priority=1, check="repo-git"))
    git = open_session(repo).catalog().manifest("git")
    assert git.origin == "repo"
    assert [c.id for c in git.checks] == ["repo-git"]
    assert len(git.overrides) == 2


def test_xdg_config_home_is_honoured(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    write(tmp_path / "xdg", "dun/plugins/extra.yaml", ONE.format(id="extra", priority=5, check="xdg-check"))
    assert open_session(repo).catalog().find("xdg-check") is not None


def test_duplicate_check_id_across_plugins_is_an_error(repo: Path) -> None:
    write(repo, ".dun/plugins/a.yaml", ONE.format(id="a", priority=5, check="same"))
    write(repo, ".dun/plugins/b.yaml", ONE.format(id="b", priority=5, check="same"))
    with pytest.raises(ConfigError) as info:
        open_session(repo).catalog()
    (error,) = info.value.errors
    assert "b.yaml:4: checks.id: duplicate check id 'same' (also defined at" in error
    assert "a.yaml:4" in error


def test_every_broken_manifest_is_reported(repo: Path) -> None:
    write(repo, ".dun/plugins/a.yaml", "id: a\nchecks:\n  - id: x\n    type: nope\n")
    write(repo, ".dun/plugins/b.yaml", "id: [b\n")
    with pytest.raises(ConfigError) as info:
        open_session(repo).catalog()
    assert len(info.value.errors) == 2
    assert any("a.yaml:4:11: checks[0].type: unknown check type 'nope'" in e for e in info.value.errors)
    assert any("b.yaml" in e and "YAML syntax error" in e for e in info.value.errors)


def test_after_unknown_and_cycles(repo: Path) -> None:
    write(repo, ".dun/plugins/a.yaml", ONE.format(id="a", priority=5, check="x") + "    after: [ghost]\n")
    with pytest.raises(ConfigError, match="after: unknown check 'ghost'"):
        open_session(repo).catalog()
    text = ONE.format(id="a", priority=5, check="x") + "    after: [y]\n" + \
        "  - id: y\n    type: files\n    rule: path-exists\n    paths: [a]\n    after: [x]\n"
    write(repo, ".dun/plugins/a.yaml", text)
    with pytest.raises(ConfigError, match="dependency cycle x -> y -> x"):
        open_session(repo).catalog()


def test_disabled_plugins_and_extra_dirs(repo: Path) -> None:
    write(repo, ".dun/config.yaml", "plugins:\n  disabled: [git]\n  dirs: [checks]\n")
    write(repo, "checks/extra.yaml", ONE.format(id="extra", priority=5, check="extra-check"))
    session = open_session(repo)
    catalog = load_catalog(session.root, session.pm, session.config)
    assert "git" not in [m.id for m in catalog.manifests]
    assert [m.id for m in catalog.disabled] == ["git"]
    assert catalog.find("extra-check") is not None


def test_outside_git_the_dun_directory_marks_the_root(plain_dir: Path) -> None:
    write(plain_dir, ".dun/plugins/p.yaml", ONE.format(id="p", priority=5, check="plain-check"))
    sub = plain_dir / "sub"
    sub.mkdir()
    session = open_session(sub)
    assert session.root == plain_dir.resolve()
    assert not session.repo.is_git
    assert session.catalog().find("plain-check") is not None
    assert os.path.isdir(session.root)
