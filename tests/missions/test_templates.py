"""Mission templates (`dun init --mission NAME`): each renders, its manifest loads in `dun check` with no error, its
checks fail until the work is done, and a scripted agent doing the work drives `dun loop` to `complete`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import git, write
from fake_agent import FAKE_COMMAND, block, write_scenario
from missions.mission_work import WORK

from dun.checks.readers.markdown import parse_boxes
from dun.missions import BUILTIN, render

DUN = [sys.executable, "-m", "dun"]


def dun(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*DUN, *args], cwd=repo, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=120)


def mission_checks(repo: Path) -> dict[str, str]:
    """Each check of the mission's manifest and the built-in mission-boxes, with its status."""
    report = json.loads(dun(repo, "check", "--format", "json").stdout)
    wanted = {c["id"] for c in report["checks"] if c["plugin"].startswith("mission")}
    return {c["id"]: c["status"] for c in report["checks"] if c["id"] in wanted}


def test_every_builtin_template_renders_without_a_placeholder_left() -> None:
    for name in BUILTIN:
        rendered = render(name)
        assert "{{" not in rendered.mission and parse_boxes(rendered.mission, "MISSION.md"), name
        assert rendered.manifest is not None and f"id: mission-{name}\n" in rendered.manifest, name


@pytest.mark.parametrize("name", BUILTIN)
def test_a_template_drives_a_scripted_loop_to_complete(name: str, repo: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    init = dun(repo, "init", "--mission", name)
    assert init.returncode == 0, init.stderr
    assert f"wrote .dun/plugins/mission-{name}.yaml" in init.stdout
    valid = dun(repo, "plugins", "validate", f".dun/plugins/mission-{name}.yaml")
    assert valid.returncode == 0, valid.stdout + valid.stderr
    config: dict[str, Any] = {
        "plugins": {"disabled": ["python", "example"]},
        "agent": {"name": "command", "command": FAKE_COMMAND, "prompt_via": "stdin"},
        "loop": {"cooldown_s": 0, "iteration_timeout_s": 30, "sandbox": "off", "max_iterations": 4},
    }
    write(repo, ".dun/config.yaml", json.dumps(config) + "\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", f"{name} mission")

    before = mission_checks(repo)  # the manifest loads (exit 2 would leave no JSON) and holds the work back
    # every check that asks for output fails; the ones that forbid something (duplicates, placeholders) pass
    wanted = [c for c in before if not c.endswith("-unique") and "-no-" not in c]
    assert len(wanted) >= 3 and all(before[c] == "fail" for c in wanted), before

    text = (repo / "MISSION.md").read_text(encoding="utf-8")
    boxes = [b for b in parse_boxes(text, "MISSION.md") if not b.optional]
    actions: list[dict[str, Any]] = [{"write": rel, "content": body} for rel, body in WORK[name].items()]
    actions += [{"tick": "MISSION.md", "box": b.text} for b in boxes]
    step = {"actions": [*actions, {"commit": f"Do the {name} mission"}],
            "status": block(task="mission-boxes", files=len(WORK[name]) + 1, exit=True), "cost_usd": 0.1}
    monkeypatch.setenv("DUN_FAKE_SCENARIO", str(write_scenario(tmp_path / "sc", [step])))
    done = dun(repo, "loop")
    assert "Traceback" not in done.stderr and "scenario error" not in done.stderr, done.stderr
    state = json.loads((repo / ".dun/state.json").read_text(encoding="utf-8"))
    assert (done.returncode, state["stop_reason"]) == (0, "complete"), done.stderr
    assert set(mission_checks(repo).values()) == {"pass"}


@pytest.mark.parametrize(("name", "rel", "cut", "check"), [
    ("research", "research/REPORT.md", "[8]: ", "research-sources"),
    ("survey", "survey/SURVEY.md", "| [10] |", "survey-table"),
    ("deepdive", "deepdive/paper.md", "- Claim: c4", "deepdive-claims"),
    ("deepdive", "deepdive/REVIEW.md", "## A paper [paper]", "deepdive-review"),
])
def test_a_depth_or_source_target_missed_by_one_fails_its_check(name: str, rel: str, cut: str, check: str,
                                                                repo: Path) -> None:
    assert dun(repo, "init", "--mission", name).returncode == 0
    body = "".join(line for line in WORK[name][rel].splitlines(keepends=True) if not line.startswith(cut))
    write(repo, rel, body)
    assert mission_checks(repo)[check] == "fail"
    write(repo, rel, WORK[name][rel])
    assert mission_checks(repo)[check] == "pass"


def test_a_users_template_directory_comes_first_and_its_typos_are_one_line(repo: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    write(mine, "research/MISSION.md", "# My research: {{topic}}\n\n- [ ] Read three papers\n")
    write(mine, "triage/MISSION.md", "# Triage\n\n- [ ] Sort the {{nonsense}}\n")
    write(repo, "MISSION.md", "# Mine\n\n- [ ] keep me\n")
    kept = dun(repo, "init", "--mission", "research")
    assert kept.returncode == 0 and "note: the research mission is not in the MISSION.md kept" in kept.stdout
    assert (repo / "MISSION.md").read_text() == "# Mine\n\n- [ ] keep me\n"
    (repo / "MISSION.md").unlink()
    (repo / ".dun/plugins/mission-research.yaml").unlink()
    done = dun(repo, "init", "--mission", "research", "--mission-dir", str(mine))
    assert done.returncode == 0, done.stderr
    assert (repo / "MISSION.md").read_text().startswith("# My research: TOPIC")
    assert not (repo / ".dun/plugins/mission-research.yaml").exists()  # no checks.yaml: no manifest
    bad = dun(repo, "init", "--force", "--mission", "triage", "--mission-dir", str(mine))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1, bad.stderr
    assert "triage/MISSION.md:3: unknown placeholder {{nonsense}}" in bad.stderr
    unknown = dun(repo, "init", "--mission", "nope")
    assert unknown.returncode == 2 and "choose from deepdive, docs, implementation, research, survey, tests" \
        in unknown.stderr
    # the config key names the directory when the flag does not
    write(repo, ".dun/config.yaml", json.dumps({"missions": {"dir": str(mine)}}) + "\n")
    forced = dun(repo, "init", "--force", "--mission", "research")
    assert forced.returncode == 0 and "replaced MISSION.md (the previous one is MISSION.md.bak)" in forced.stdout


@pytest.mark.parametrize(("checks", "error"), [
    ("id: mission-broken\nchecks: [unclosed\n", "broken/checks.yaml:3:1: YAML syntax error"),
    ("id: mission-broken\nchecks:\n  - id: x\n    type: nosuch\n", "broken/checks.yaml:4:11: checks[0].type: unknown"),
])
def test_a_template_whose_checks_dun_check_cannot_load_writes_nothing(checks: str, error: str, repo: Path,
                                                                       tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    write(mine, "broken/MISSION.md", "# Broken\n\n- [ ] a box\n")
    write(mine, "broken/checks.yaml", checks)
    before = sorted(p.name for p in repo.iterdir())
    bad = dun(repo, "init", "--mission", "broken", "--mission-dir", str(mine))
    assert bad.returncode == 2 and error in bad.stderr and "Traceback" not in bad.stderr, bad.stderr
    assert sorted(p.name for p in repo.iterdir()) == before  # no MISSION.md, no .dun/ whose manifest breaks dun check


def test_a_hyphen_in_a_placeholder_is_a_typo_named_not_text_left_for_the_agent(repo: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    write(mine, "triage/MISSION.md", "# Triage of {{paper_title}}\n\n- [ ] Read {{ paper-link }}\n")
    bad = dun(repo, "init", "--mission", "triage", "--mission-dir", str(mine))
    assert bad.returncode == 2 and "triage/MISSION.md:3: unknown placeholder {{ paper-link }}" in bad.stderr, bad.stderr
    assert not (repo / "MISSION.md").exists()


def test_a_linked_plugins_directory_is_not_written_through(repo: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / ".dun").mkdir(exist_ok=True)
    (repo / ".dun/plugins").symlink_to(elsewhere)  # a cloned repository can carry such a link
    done = dun(repo, "init", "--mission", "research")
    assert done.returncode == 2 and "a link where dun expects" in done.stderr and "Traceback" not in done.stderr
    assert not list(elsewhere.iterdir())


@pytest.mark.parametrize("kind", ["directory", "fifo"])
def test_a_templates_checks_that_is_no_file_is_one_line_and_writes_nothing(repo: Path, tmp_path: Path,
                                                                           kind: str) -> None:
    mine = tmp_path / "mine"
    write(mine, "odd/MISSION.md", "# Odd\n\n- [ ] one\n")
    if kind == "directory":
        (mine / "odd" / "checks.yaml").mkdir()
    else:
        os.mkfifo(mine / "odd" / "checks.yaml")
    done = dun(repo, "init", "--mission", "odd", "--mission-dir", str(mine))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "checks.yaml" in done.stderr, done.stderr
    assert not (repo / "MISSION.md").exists()
