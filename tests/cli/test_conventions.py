"""One command line: `dun --help` and every command's help, rendered, held to the conventions. Every command takes
-C PATH; the commands are grouped (checks, loop, operator, setup); a help text that names agents names every agent
the registry knows; no name means two things and acknowledging lives in `dun ack` only; the README names every
command. The old spellings still parse."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from conftest import git, write

from dun.cli.conventions import SECTIONS, agent_names
from dun.cli.main import cli, main

ROOT = Path(__file__).resolve().parents[2]
# the same verb on different things, each in its own group: `dun list` (checks) and `dun plugins list`, the loop's
# `dun status` and `dun service status` / `dun fleet status`, `dun history` and `dun service install`...
SAME_VERB = {"list", "status"}


def commands(group: click.Group = cli, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    """Every visible command and group under `group` (those dun's built-in plugins add too), by its words after
    `dun`."""
    found = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        found.append(((*prefix, name), command))
        if isinstance(command, click.Group):
            found += commands(command, (*prefix, name))
    return found


def is_container(command: click.Command) -> bool:
    """A group that only holds subcommands (`dun plugins`, `dun service`): its subcommands take -C, not it."""
    return isinstance(command, click.Group) and not command.invoke_without_command


def help_text(*words: str) -> str:
    result = CliRunner().invoke(cli, [*words, "--help"], prog_name="dun", terminal_width=100)
    assert result.exit_code == 0, (words, result.output)
    return result.output


@pytest.fixture(scope="module")
def helps() -> dict[tuple[str, ...], str]:
    return {(): help_text(), **{words: help_text(*words) for words, _ in commands()}}


def test_every_command_takes_c_path(helps: dict[tuple[str, ...], str]) -> None:
    for words, command in commands():
        if is_container(command):
            continue
        assert re.search(r"^\s+-C(,| )", helps[words], re.M), f"dun {' '.join(words)} has no -C PATH"


def test_dun_help_groups_every_command(helps: dict[tuple[str, ...], str]) -> None:
    text = helps[()]
    headings = re.findall(r"^(\w+):$", text, re.M)
    assert headings == ["Options", "Checks", "Loop", "Operator", "Setup"], text
    top = [words[0] for words, _ in commands() if len(words) == 1]
    for name in top:
        homes = [title for title, names in SECTIONS.items() if name in names]
        assert len(homes) == 1, f"dun {name} is in {homes or 'no section'}"
        section = text.split(f"\n{homes[0]}:\n", 1)[1].split("\n\n", 1)[0]
        assert re.search(rf"^  {name}\b", section, re.M), f"dun {name} is not listed under {homes[0]}"


def test_every_agent_is_named_wherever_agents_are_listed(helps: dict[tuple[str, ...], str]) -> None:
    agents = agent_names()
    assert {"claude", "codex", "gemini", "opencode", "aider", "pi", "command"} <= set(agents)
    assert all(agent in helps[("loop",)] for agent in agents), helps[("loop",)]
    for words, text in helps.items():
        named = [agent for agent in agents if re.search(rf"\b{agent}\b", text, re.I) and agent != "command"]
        if len(named) >= 2:  # a list of agents: all of them
            missing = [a for a in agents if not re.search(rf"\b{a}\b", text)]
            assert not missing, f"dun {' '.join(words)} lists agents without {missing}"


def test_no_name_means_two_things(helps: dict[tuple[str, ...], str]) -> None:
    last_words: dict[str, list[tuple[str, ...]]] = {}
    for words, _ in commands():
        last_words.setdefault(words[-1], []).append(words)
    for name, places in last_words.items():
        assert len(places) == 1 or name in SAME_VERB, f"{name!r} names {places}"
    shorts = [command.get_short_help_str(200) for _, command in commands()]
    assert len(shorts) == len(set(shorts)), "two commands say the same"
    acknowledging = [words for words, text in helps.items() if words and re.search(r"\backnowledg(e|es|ing)\b", text,
                                                                                   re.I)]
    assert acknowledging == [("ack",)], acknowledging  # others may say what was acknowledged, not do it
    report = helps[("report",)]
    assert "--html" not in report and "--latest" not in report, "report means one thing: the HTML report"


def test_the_readme_lists_every_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for words, command in commands():
        if is_container(command):
            continue
        assert f"dun {' '.join(words)}" in readme, f"dun {' '.join(words)} is missing from README.md"
    listed = re.findall(r"^\| `dun ([a-z]+)", readme, re.M)
    assert sorted(set(listed)) == sorted(words[0] for words, _ in commands() if len(words) == 1), \
        "the README's table of commands names every command once"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("conv") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "MISSION.md", "# Mission\n- [ ] ship\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")
    return root


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_the_positional_path_of_before_still_works(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Scripts and installed service units say `dun loop PATH`: it stays, hidden from the help, same as -C."""
    monkeypatch.chdir(tmp_path)
    assert run(["status", str(repo)], capsys) == run(["status", "-C", str(repo)], capsys)
    assert run(["status", str(repo), "-C", str(repo)], capsys)[0] == 0  # the same directory twice is fine
    code, _, err = run(["status", str(repo), "-C", str(tmp_path)], capsys)
    assert code == 2 and err.count("\n") == 1 and "give one, as -C PATH" in err
    for words in (("check",), ("loop",), ("status",), ("init",), ("doctor",), ("list",)):
        assert "[PATH]" not in help_text(*words).splitlines()[0], words


def test_agent_flag_against_another_agents_command_is_an_error(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """`--agent claude` with `agent.command` set for the command agent would have run that script as claude."""
    monkeypatch.chdir(repo)
    write(repo, ".dun/config.yaml", "agent:\n  name: command\n  command: [./night.sh]\n")
    code, _, err = run(["loop", "--agent", "claude", "--dry-run"], capsys)
    assert code == 2 and err == ("dun: --agent claude: agent.command is set for agent 'command' and would run in its "
                                 "place; pass --agent command, or remove agent.command from the config\n")
    (repo / ".dun" / "config.yaml").unlink()
