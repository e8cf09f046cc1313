"""`dun init`, `dun explain`, `dun plugins list|validate`, `dun config show`."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import git, write

from dun.cli.main import cli, main


def invoke(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_init_scaffolds_keeps_what_exists_and_backs_up_with_force(repo: Path) -> None:
    code, out, _ = invoke(["init", str(repo)])
    assert code == 0
    for rel in (".dun/config.yaml", ".dun/plugins/example.yaml", "MISSION.md", ".dun/.gitignore"):
        assert (repo / rel).is_file(), rel
    assert "note: MISSION.md has no boxes yet" in out  # the template's boxes are an illustration
    (repo / "MISSION.md").write_text("# mine\n\n- [ ] ship it\n")
    (repo / ".dun/plugins/example.yaml").unlink()
    code, out, _ = invoke(["init", str(repo)])
    assert code == 0 and (repo / "MISSION.md").read_text() == "# mine\n\n- [ ] ship it\n"  # nothing lost
    assert "wrote .dun/plugins/example.yaml" in out and "kept .dun/config.yaml, MISSION.md" in out
    assert "no boxes" not in out
    code, out, _ = invoke(["init", str(repo), "--force"])
    assert code == 0 and "replaced MISSION.md (the previous one is MISSION.md.bak)" in out
    assert (repo / "MISSION.md.bak").read_text() == "# mine\n\n- [ ] ship it\n"
    invoke(["init", str(repo), "--force"])
    assert (repo / "MISSION.md.bak").read_text() == "# mine\n\n- [ ] ship it\n"  # a backup is never overwritten
    assert (repo / "MISSION.md.bak.1").is_file()


def test_init_works_after_other_commands(repo: Path) -> None:
    """`dun iterate` (or a loop) wrote .dun/ first: init adds what is missing and brings the .gitignore up to date."""
    write(repo, ".dun/.gitignore", "logs/\nstate.json\nmy-notes/\n")
    code, out, _ = invoke(["init", str(repo)])
    assert code == 0 and "wrote .dun/.gitignore" in out and "wrote .dun/config.yaml" in out
    text = (repo / ".dun/.gitignore").read_text()
    assert text.startswith("# dun-gitignore 2") and text.endswith("my-notes/\n")
    assert "up to date .dun/.gitignore" in invoke(["init", str(repo)])[1]


@pytest.mark.parametrize("readme", ["README.md", "README.rst", "README"])
def test_day_one_after_init_is_clean(repo: Path, readme: str) -> None:
    if readme != "README.md":
        git(repo, "mv", "README.md", readme)
    write(repo, "app.py", "x = 1  # XXX: a marker an ordinary repository has\n")
    invoke(["init", str(repo)])
    code, out, _ = invoke(["plugins", "validate", str(repo / ".dun/plugins/example.yaml")])
    assert code == 0 and "ok, plugin 'example' with 1 check(s)" in out
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "dun init")
    code, out, _ = invoke(["check", str(repo), "--format", "json"])
    statuses = {c["id"]: (c["status"], c["signal"]) for c in json.loads(out)["checks"]}
    assert statuses["readme"][0] == "pass"
    assert statuses["mission-boxes"] == ("pass", "0/0 boxes done")  # the template's example boxes are no work
    assert statuses["git-status"][0] == "pass"
    assert code == 0


def test_init_agents_md_writes_one_section_and_keeps_the_rest(repo: Path) -> None:
    code, out, _ = invoke(["init", str(repo), "--agents-md"])
    assert code == 0 and "created AGENTS.md (the dun section)" in out
    first = (repo / "AGENTS.md").read_text()
    assert first.startswith("# Agents\n\n<!-- dun:begin") and "`dun task ID`" in first
    code, out, _ = invoke(["init", str(repo), "--agents-md"])  # scaffold exists: kept, not an error
    assert code == 0 and "unchanged AGENTS.md" in out and "kept .dun/config.yaml" in out
    (repo / "AGENTS.md").write_text("# Our agents\n\nUse tabs.\n")
    invoke(["init", str(repo), "--agents-md"])
    text = (repo / "AGENTS.md").read_text()
    assert text.startswith("# Our agents\n\nUse tabs.\n\n<!-- dun:begin")
    (repo / "AGENTS.md").write_text(text.replace("How to work:", "How NOT to work:") + "\nAfter.\n")
    invoke(["init", str(repo), "--agents-md"])
    assert (repo / "AGENTS.md").read_text() == text + "\nAfter.\n"  # only the section is rewritten
    assert main(["init", str(repo)]) == 0  # without --agents-md an existing scaffold is kept too


def test_explain_shows_definition_and_origin(repo: Path) -> None:
    write(repo, ".dun/plugins/mine.yaml", "id: mine\nchecks:\n  - id: readme\n    type: files\n"
                                          "    rule: path-exists\n    paths: [README.md]\n    next: write it\n")
    code, out, _ = invoke(["explain", "readme", "-C", str(repo)])
    assert code == 0
    assert f"defined:   {repo / '.dun/plugins/mine.yaml'}:3" in out
    assert "plugin:    mine (repo)" in out
    assert "rule: path-exists" in out
    code, out, _ = invoke(["explain", "git-status", "-C", str(repo), "--json"])
    data = json.loads(out)
    assert data["origin"] == "builtin" and data["defined_at"].endswith("git.yaml:7")
    assert main(["explain", "readmy", "-C", str(repo)]) == 2


def test_explain_unknown_check_suggests(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "git-statu", "-C", str(repo)]) == 2
    err = capsys.readouterr().err
    assert "no check 'git-statu' (did you mean 'git-status'?)" in err
    assert "`dun list` shows every check" in err and "--format llm" not in err


def test_plugins_validate_reports_every_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path, "good.yaml", "id: g\nchecks:\n  - {id: a, type: git-status}\n")
    bad = write(tmp_path, "bad.yaml", "id: b\nchecks:\n  - {id: a, type: git-status, untracked: maybe}\n"
                                      "  - {id: a, type: git-status}\n")
    assert main(["plugins", "validate", str(good), str(bad)]) == 2
    captured = capsys.readouterr()
    assert f"{good}: ok" in captured.out
    err = captured.err.splitlines()
    assert err == [f"{bad}:3:42: checks[0].untracked: expected true or false, got str",
                   f"{bad}:4:10: checks[1].id: duplicate check id 'a' (also checks[0])"]


def test_plugins_list_shows_python_and_yaml_plugins(repo: Path) -> None:
    _code, out, _ = invoke(["plugins", "list", str(repo), "--json"])
    data = json.loads(out)
    names = {p["name"]: p for p in data["python"]}
    assert names["builtin:checks.command"]["hooks"] == ["dun_check_types"]
    assert names["builtin:agents.claude"]["hooks"] == ["dun_agents"]
    assert names["builtin:output.text"]["source"] == "builtin"
    assert {m["id"] for m in data["manifests"]} >= {"git", "python", "go", "helix", "mission"}


def test_plugins_list_columns_line_up(repo: Path) -> None:
    _code, out, _ = invoke(["plugins", "list", str(repo)])
    lines = out.splitlines()
    python = lines[1:lines.index("YAML manifests (later layers override earlier ones by id):")]
    assert len({line.index(" builtin ") for line in python}) == 1
    assert len({line.index("hooks: ") for line in python}) == 1
    manifests = [line for line in lines if line.endswith(".yaml")]
    # the layer column: `builtin`, or `plugin` for a manifest a Python plugin ships (the paper watch's `papers`)
    assert {line.split()[1] for line in manifests} == {"builtin", "plugin"}
    assert len({line.index(f" {line.split()[1]} ") for line in manifests}) == 1


def test_entry_point_plugins_are_loaded(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A third-party package exposing an entry point in group `dun` adds a check type and a format."""
    site = tmp_path / "site"
    write(site, "dun_extra.py", '''
from dun.engine.checkapi import CheckType
from dun.engine.hookspecs import hookimpl
from dun.engine.model import Outcome, Status

@hookimpl
def dun_check_types():
    return [CheckType("always-warn", "demo", {}, lambda spec, ctx: Outcome(Status.WARN, "from a plugin"))]

@hookimpl
def dun_output_formats():
    return {"count": lambda report, opts: f"{len(report.results)} results\\n"}
''')
    write(site, "dun_extra-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: dun-extra\nVersion: 1.0\n")
    write(site, "dun_extra-1.0.dist-info/entry_points.txt", "[dun]\nextra = dun_extra\n")
    monkeypatch.syspath_prepend(str(site))
    write(repo, ".dun/plugins/p.yaml", "id: p\nchecks:\n  - {id: w, type: always-warn}\n")
    code, out, _ = invoke(["check", str(repo), "--only", "w", "--format", "llm"])
    assert code == 0
    assert "[LOW] w warn: from a plugin" in out
    code, out, _ = invoke(["check", str(repo), "--only", "w", "--format", "count"])
    assert out == "1 results\n"
    code, out, _ = invoke(["plugins", "list", str(repo), "--json"])
    extra = next(p for p in json.loads(out)["python"] if p["name"] == "extra")
    assert extra["source"] == "entry point (dun-extra 1.0)"
    assert extra["hooks"] == ["dun_check_types", "dun_output_formats"]
    sys.modules.pop("dun_extra", None)


def test_a_plugin_adds_a_command_and_may_not_take_a_name_already_used(repo: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """`dun_commands`: a third-party command runs like dun's own and shows in --help; a name dun (or the paper
    watch) already uses is one line and exit 2."""
    site = tmp_path / "site"
    write(site, "dun_hello.py", '''
import os
import click
from dun.engine.hookspecs import hookimpl

@click.command("hello")
@click.option("-C", "--path", "path")
def hello(path):
    """Say hello."""
    click.echo(f"hello from {os.path.basename(path)}")

@click.command("papers")
def papers():
    pass

@hookimpl
def dun_commands():
    return [hello, papers] if os.environ.get("DUN_HELLO_CLASH") else [hello]
''')
    write(site, "dun_hello-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: dun-hello\nVersion: 1.0\n")
    write(site, "dun_hello-1.0.dist-info/entry_points.txt", "[dun]\nhello = dun_hello\n")
    monkeypatch.syspath_prepend(str(site))
    assert invoke(["hello", "-C", str(repo)])[:2] == (0, "hello from repo\n")
    code, out, _ = invoke(["--help"])
    assert code == 0 and re.search(r"^  hello +Say hello\.$", out, re.M) and re.search(r"^  papers ", out, re.M)
    monkeypatch.setenv("DUN_HELLO_CLASH", "1")
    assert main(["hello", "-C", str(repo)]) == 2
    assert capsys.readouterr().err == "dun: command 'papers' is declared by both builtin:papers.plugin and hello\n"
    assert main(["check", str(repo)]) in (0, 1)  # dun's own commands never build the plugins' ones
    sys.modules.pop("dun_hello", None)


def test_broken_entry_point_plugin_is_a_config_error(repo: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    site = tmp_path / "site"
    write(site, "dun_broken.py", "raise ImportError('missing dependency foo')\n")
    write(site, "dun_broken-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: dun-broken\nVersion: 1.0\n")
    write(site, "dun_broken-1.0.dist-info/entry_points.txt", "[dun]\nbroken = dun_broken\n")
    monkeypatch.syspath_prepend(str(site))
    assert main(["check", str(repo)]) == 2
    assert "failed to load: missing dependency foo" in capsys.readouterr().err
    assert main(["--help"]) == 0  # dun's own commands are still listed, the plugin's failure named
    out, err = capsys.readouterr()
    assert "  check " in out and "dun: plugin commands not listed: a plugin in entry-point group 'dun' failed" in err


def test_config_show_lists_keys_values_and_sources(repo: Path) -> None:
    write(repo, ".dun/config.yaml", "check:\n  jobs: 3\n")
    code, out, _ = invoke(["config", "show", str(repo)])
    assert code == 0
    assert "check.jobs = 3\n" in out
    assert "check.timeout_s = 300.0  (default)" in out
    assert f"# config read from: {repo / '.dun/config.yaml'}" in out
    code, out, _ = invoke(["config", "show", str(repo), "--json"])
    assert json.loads(out)["values"]["check"]["jobs"] == 3


def test_config_show_toml_round_trips_through_pyproject(repo: Path, tmp_path: Path) -> None:
    write(repo, ".dun/config.yaml", "check:\n  jobs: 3\nplugins:\n  disabled: [go]\n")
    code, out, _ = invoke(["config", "show", str(repo), "--toml"])
    assert code == 0 and out.startswith("[tool.dun.check]")
    other = tmp_path / "other"
    other.mkdir()
    write(other, "pyproject.toml", out)
    code, out, _ = invoke(["config", "show", str(other), "--json"])
    values = json.loads(out)["values"]
    assert values["check"]["jobs"] == 3 and values["plugins"]["disabled"] == ["go"]


def test_check_where_no_check_applies_says_so_plainly(plain_dir: Path) -> None:
    code, out, _ = invoke(["check", str(plain_dir)])
    assert code == 0
    assert out.splitlines()[-1].startswith("no check applies here (") and "nothing was judged" in out
    assert "nothing actionable" not in out
