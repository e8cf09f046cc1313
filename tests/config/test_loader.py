from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write

from dun.config.loader import load_config
from dun.core.errors import ConfigError


def test_defaults_without_any_file(repo: Path) -> None:
    cfg = load_config(repo)
    assert cfg.source == "defaults"
    assert cfg.get("check.jobs") == 8
    assert cfg.get("plugins.disabled") == []


def test_yaml_config_merges_with_defaults(repo: Path) -> None:
    write(repo, ".dun/config.yaml", "check:\n  jobs: 3\n")
    cfg = load_config(repo)
    assert cfg.get("check.jobs") == 3
    assert cfg.get("check.timeout_s") == 300.0


def test_pyproject_tool_dun(repo: Path) -> None:
    write(repo, "pyproject.toml", "[tool.dun.check]\njobs = 2\nwarn_is_actionable = true\n")
    cfg = load_config(repo)
    assert cfg.get("check.jobs") == 2
    assert cfg.get("check.warn_is_actionable") is True
    assert "pyproject.toml" in cfg.source


def test_yaml_wins_over_pyproject(repo: Path) -> None:
    write(repo, "pyproject.toml", "[tool.dun.check]\njobs = 2\n")
    write(repo, ".dun/config.yaml", "check:\n  jobs: 5\n")
    assert load_config(repo).get("check.jobs") == 5


def test_errors_name_file_line_col_and_key(repo: Path) -> None:
    write(repo, ".dun/config.yaml", "check:\n  jobs: many\n  job: 2\nplugin: {}\n")
    with pytest.raises(ConfigError) as info:
        load_config(repo)
    path = repo / ".dun" / "config.yaml"
    assert info.value.errors == [
        f"{path}:2:9: check.jobs: expected an integer, got str",
        f"{path}:3:3: check.job: unknown key 'job' (did you mean 'jobs'?)",
        f"{path}:4:1: plugin: unknown key 'plugin' (did you mean 'plugins'?)",
    ]


def test_bad_pyproject_is_one_line(repo: Path) -> None:
    write(repo, "pyproject.toml", "[tool.dun\n")
    with pytest.raises(ConfigError) as info:
        load_config(repo)
    assert len(info.value.errors) == 1
    assert "pyproject.toml" in info.value.errors[0]


def test_pyproject_wrong_type_names_the_key(repo: Path) -> None:
    write(repo, "pyproject.toml", "[tool.dun.check]\njobs = 'x'\n")
    with pytest.raises(ConfigError, match=r"pyproject.toml:2:1: check.jobs: expected an integer, got str"):
        load_config(repo)


def test_a_command_without_plugins_keeps_dun_sections_beside_a_plugins_section(repo: Path) -> None:
    """`dun guard`, `dun respond`, `dun service` load no plugin: a plugin's section is left unchecked, dun's sections
    still read (and still checked); the full load (`dun check`, with the plugins' fields) still names a typo."""
    from dun.config.loader import dun_config

    write(repo, ".dun/config.yaml", "acme_plugin: {level: 3}\nsecrets:\n  patterns: ['ACME-[0-9]+']\n")
    assert dun_config(repo).get("secrets.patterns") == ["ACME-[0-9]+"]
    with pytest.raises(ConfigError):
        load_config(repo)
    write(repo, ".dun/config.yaml", "acme_plugin: {level: 3}\ncheck:\n  jobs: many\n")
    with pytest.raises(ConfigError) as info:
        dun_config(repo)
    assert info.value.errors == [f"{repo / '.dun' / 'config.yaml'}:3:9: check.jobs: expected an integer, got str"]
