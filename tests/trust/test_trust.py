"""What dun checks about the agent, end to end: real git repositories, the scripted fake agent, `dun loop` as a
subprocess. Every kind of discrepancy has a test whose agent commits the offence and one whose honest agent
produces no discrepancy at all; the policies (restore/revert, flag, stop) and the consequences (the circuit, the
next prompt, `dun logs`, REPORT.md) are tested the same way.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import GIT_ENV, git, write
from fake_agent import FAKE_COMMAND, block, calls, write_scenario

ROOT = Path(__file__).resolve().parents[2]
DUN = [sys.executable, "-m", "dun"]
PY = sys.executable
MISSION = "# Mission\n\n- [ ] alpha\n- [ ] beta\n- [ ] gamma\n"
GREET = "id: x\nchecks:\n  - id: greet\n    type: command\n    command: test -f greet.txt\n"
WEAK = "id: x\nchecks:\n  - id: greet\n    type: command\n    command: 'true'\n"
TESTS_CHECK = (f"id: suite\nchecks:\n  - id: suite-tests\n    type: command\n"
               f"    command: {PY} -m pytest -q -p no:cacheprovider tests\n")
PASSING_TEST = "def test_ok():\n    assert True\n"
FAILING_TEST = "def test_bad():\n    assert False\n"


# --------------------------------------------------------------------------------------------------------------------
# helpers


@pytest.fixture(autouse=True)
def identity_in_gitconfig(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The test identity in ~/.gitconfig instead of $GIT_AUTHOR_NAME & co, as on a developer's machine: the
    environment would override the identity dun commits its repairs with (see the xfail test at the end)."""
    for var in GIT_ENV:
        monkeypatch.delenv(var, raising=False)
    (isolated_home / ".gitconfig").write_text("[user]\n\tname = dun-test\n\temail = test@example.invalid\n",
                                              encoding="utf-8")
    yield


def make_repo(repo: Path, mission: str = MISSION, files: dict[str, str] | None = None,
              trust: dict[str, Any] | None = None, circuit: dict[str, Any] | None = None,
              max_iterations: int = 1, config: dict[str, Any] | None = None) -> Path:
    """`.dun/config.yaml` driving the fake agent, the runtime .gitignore, a MISSION.md and `files`, committed."""
    cfg: dict[str, Any] = {
        "plugins": {"disabled": ["python"]},
        "agent": {"name": "command", "command": FAKE_COMMAND, "prompt_via": "stdin"},
        "loop": {"cooldown_s": 0, "kill_grace_s": 0.5, "iteration_timeout_s": 20, "max_iterations": max_iterations,
                 "sandbox": "off"},  # the fake agent keeps its scenario under /tmp, which a sandbox hides
        **(config or {}),
    }
    if trust:
        cfg["trust"] = trust
    if circuit:
        cfg["circuit"] = circuit
    write(repo, ".dun/config.yaml", json.dumps(cfg, indent=1) + "\n")  # JSON is YAML
    write(repo, ".dun/.gitignore", (ROOT / "templates" / "dun.gitignore").read_text(encoding="utf-8"))
    write(repo, ".gitignore", "__pycache__/\n.pytest_cache/\n")
    write(repo, "MISSION.md", mission)
    for rel, text in (files or {}).items():
        write(repo, rel, text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "mission")
    return repo


def step(*actions: dict[str, Any], task: str | None = "x", status: str = "IN_PROGRESS", files: int | None = 1,
         exit: bool = False, **extra: Any) -> dict[str, Any]:
    return {"actions": list(actions), "status": block(task=task, status=status, files=files, exit=exit),
            "cost_usd": 0.01, **extra}


def wr(path: str, content: str) -> dict[str, Any]:
    return {"write": path, "content": content}


def commit(message: str = "work") -> dict[str, Any]:
    return {"commit": message}


def tick(box: str) -> dict[str, Any]:
    return {"tick": "MISSION.md", "box": box}


def scenario(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: list[dict[str, Any]]) -> Path:
    path = write_scenario(tmp_path / "sc", steps)  # outside the repo: not a change git would see
    monkeypatch.setenv("DUN_FAKE_SCENARIO", str(path))
    return path


def dun(repo: Path, *args: str, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*DUN, *args], cwd=repo, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout)


def loop(repo: Path, code: int | None = None) -> subprocess.CompletedProcess[str]:
    done = dun(repo, "loop")
    assert "fake_agent: scenario error" not in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    if code is not None:
        assert done.returncode == code, done.stderr
    return done


def state(repo: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((repo / ".dun" / "state.json").read_text(encoding="utf-8"))
    return data


def log(repo: Path, n: int) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((repo / ".dun" / "logs" / f"iteration-{n}.json").read_text(encoding="utf-8"))
    return data


def verification(repo: Path, n: int) -> dict[str, Any]:
    data: dict[str, Any] = log(repo, n)["verification"]
    return data


def kinds(repo: Path, n: int) -> list[str]:
    return [d["kind"] for d in verification(repo, n)["discrepancies"]]


def read(repo: Path, rel: str) -> str:
    return (repo / rel).read_text(encoding="utf-8")


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def last_commit(repo: Path) -> tuple[str, str]:
    """(author name, subject) of HEAD."""
    author, subject = git(repo, "log", "-1", "--format=%an%n%s").strip().split("\n", 1)
    return author, subject


def committed(repo: Path, rel: str) -> str:
    return git(repo, "show", f"HEAD:{rel}")


def dirty(repo: Path) -> str:
    return git(repo, "status", "--porcelain", "--untracked-files=all")


# --------------------------------------------------------------------------------------------------------------------
# unverified_completion


def test_task_completed_naming_a_check_that_still_fails(repo: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, files={".dun/plugins/x.yaml": GREET})
    scenario(tmp_path, monkeypatch, [step(wr("notes.txt", "tried\n"), commit(), task="greet", status="COMPLETE")])
    loop(repo, 1)
    found = verification(repo, 1)["discrepancies"]
    assert [d["kind"] for d in found] == ["unverified_completion"]
    assert found[0]["check"] == "greet" and found[0]["claim"] == "greet"
    assert "check greet still fails" in found[0]["detail"]


def test_task_completed_naming_a_check_item_still_listed(repo: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo)
    claim = "mission-boxes@MISSION.md:4"  # the `beta` box, still open
    scenario(tmp_path, monkeypatch, [step(tick("alpha"), commit(), task=claim, status="COMPLETE")])
    loop(repo, 1)
    found = verification(repo, 1)["discrepancies"]
    assert [d["kind"] for d in found] == ["unverified_completion"]
    assert "MISSION.md:4 is still listed by mission-boxes" in found[0]["detail"]


def test_a_ticked_box_whose_verify_command_fails_is_unticked_again(repo: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    mission = "# Mission\n\n- [ ] alpha\n  verify: test -f alpha.txt\n- [ ] beta\n"
    make_repo(repo, mission=mission)
    scenario(tmp_path, monkeypatch, [step(tick("alpha"), commit("Do alpha"), task="alpha", status="COMPLETE")])
    loop(repo, 1)
    v = verification(repo, 1)
    assert [d["kind"] for d in v["discrepancies"]] == ["unverified_completion"]
    assert "verify: test -f alpha.txt exited 1" in v["discrepancies"][0]["detail"]
    assert v["restored"] == ["MISSION.md"]
    assert read(repo, "MISSION.md") == mission  # unticked again, nothing else touched
    assert committed(repo, "MISSION.md") == mission
    author, subject = last_commit(repo)
    assert author == "dun" and subject.startswith("dun: restore")
    assert git(repo, "log", "--format=%an", "-2").split() == ["dun", "fake-agent"]
    assert dirty(repo) == ""
    assert v["tasks"]["ticked"] == []


def test_a_ticked_box_naming_a_failing_check(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mission = "# Mission\n\n- [ ] make `greet` pass\n- [ ] beta\n"
    make_repo(repo, mission=mission, files={".dun/plugins/x.yaml": GREET})
    scenario(tmp_path, monkeypatch, [step(tick("greet"), commit(), task="greet box")])
    loop(repo, 1)
    v = verification(repo, 1)
    assert [d["kind"] for d in v["discrepancies"]] == ["unverified_completion"]
    assert "check greet still fails" in v["discrepancies"][0]["detail"]
    assert read(repo, "MISSION.md") == mission
    assert last_commit(repo)[0] == "dun"


def test_a_ticked_box_with_flag_policy_stays_ticked_but_is_recorded(repo: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    mission = "# Mission\n\n- [ ] alpha\n  verify: test -f alpha.txt\n- [ ] beta\n"
    make_repo(repo, mission=mission, trust={"on_task_tamper": "flag"})
    scenario(tmp_path, monkeypatch, [step(tick("alpha"), commit("Do alpha"))])
    loop(repo, 1)
    v = verification(repo, 1)
    assert [d["kind"] for d in v["discrepancies"]] == ["unverified_completion"]
    assert v["restored"] == []
    assert "- [x] alpha" in read(repo, "MISSION.md")
    assert last_commit(repo)[0] == "fake-agent"


def test_honest_ticks_with_evidence_and_a_true_claim(repo: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    mission = "# Mission\n\n- [ ] make `greet` pass\n- [ ] alpha\n  verify: test -f alpha.txt\n- [ ] beta\n"
    make_repo(repo, mission=mission, files={".dun/plugins/x.yaml": GREET})
    scenario(tmp_path, monkeypatch, [step(wr("greet.txt", "hi\n"), wr("alpha.txt", "a\n"), tick("greet"),
                                          tick("alpha"), commit(), task="greet", status="COMPLETE", files=3)])
    loop(repo, 1)
    v = verification(repo, 1)
    assert v["discrepancies"] == [] and v["notes"] == [] and v["restored"] == []
    assert v["tasks"]["ticked"] == ["make `greet` pass", "alpha"]
    assert v["tasks"]["unverified"] == []
    assert last_commit(repo)[0] == "fake-agent"


# --------------------------------------------------------------------------------------------------------------------
# phantom_changes


def test_files_modified_with_no_change_at_all(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo)
    scenario(tmp_path, monkeypatch, [step(files=3)])
    loop(repo, 1)
    found = verification(repo, 1)["discrepancies"]
    assert [d["kind"] for d in found] == ["phantom_changes"]
    assert found[0]["claimed"] == 3
    assert "FILES_MODIFIED: 3" in found[0]["detail"]


def test_a_count_that_is_merely_off_is_a_note(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo)
    scenario(tmp_path, monkeypatch, [step(wr("notes.txt", "n\n"), commit(), files=3)])
    loop(repo, 1)
    v = verification(repo, 1)
    assert v["discrepancies"] == []
    assert v["notes"] == ["FILES_MODIFIED 3, git shows 1"]


def test_claiming_a_check_with_progress_on_it_is_honest_work(repo: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """One box of three ticked, the check claimed: work in progress on it, not a false claim."""
    make_repo(repo, max_iterations=2)
    scenario(tmp_path, monkeypatch, [step(tick("alpha"), commit("Do alpha"), task="mission-boxes",
                                          status="COMPLETE"),
                                     step(wr("notes.txt", "n\n"), commit("notes"), task="mission-boxes",
                                          status="COMPLETE")])
    loop(repo, 1)
    assert kinds(repo, 1) == []  # beta and gamma remain, but the claimed check moved
    found = verification(repo, 2)["discrepancies"]  # the same claim with nothing of the check done
    assert [d["kind"] for d in found] == ["unverified_completion"]
    assert "check mission-boxes still fails" in found[0]["detail"]
    assert state(repo)["circuit"]["discrepancies"] == 1


# --------------------------------------------------------------------------------------------------------------------
# empty_completion


@pytest.mark.parametrize(("status", "exit", "said"), [("COMPLETE", False, "STATUS: COMPLETE"),
                                                      ("IN_PROGRESS", True, "EXIT_SIGNAL: true")])
def test_complete_with_no_change_while_checks_fail(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   status: str, exit: bool, said: str) -> None:
    make_repo(repo)
    scenario(tmp_path, monkeypatch, [step(task="all of it", status=status, files=0, exit=exit)])
    loop(repo, 1)
    found = verification(repo, 1)["discrepancies"]
    assert [d["kind"] for d in found] == ["empty_completion"]
    assert said in found[0]["detail"]


def test_an_empty_commit_is_no_change(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo)
    scenario(tmp_path, monkeypatch, [step({"commit": "wip", "allow_empty": True}, status="COMPLETE", files=3)])
    loop(repo, 1)
    assert log(repo, 1)["progress"]["files_changed"] == 0
    assert kinds(repo, 1) == ["phantom_changes"]


def test_a_confirmation_that_rightly_changes_nothing_is_not_empty(repo: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, mission="# Mission\n\n- [ ] alpha\n", max_iterations=5)
    scenario(tmp_path, monkeypatch, [step(tick("alpha"), commit("Do alpha"), task="alpha", status="IN_PROGRESS"),
                                     step(task="checked everything", status="COMPLETE", files=0, exit=True)])
    loop(repo, 0)
    s = state(repo)
    assert (s["stop_reason"], s["iteration"]) == ("complete", 2)
    assert log(repo, 2)["confirmation"] is True
    assert log(repo, 2)["checks_after"]["actionable"] == 0
    assert verification(repo, 1)["discrepancies"] == []
    assert verification(repo, 2)["discrepancies"] == []


# --------------------------------------------------------------------------------------------------------------------
# task_tampered

TAMPERED = "# Mission\n\n- [ ] alpha\n- [ ] gamma\n- [ ] delta\n\nA new paragraph the agent wrote.\n"
RESTORED = "# Mission\n\n- [ ] alpha\n- [ ] beta\n- [ ] gamma\n- [ ] delta\n\nA new paragraph the agent wrote.\n"


def test_a_removed_box_is_restored_and_the_agents_other_edits_stay(repo: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo)
    scenario(tmp_path, monkeypatch, [step(wr("MISSION.md", TAMPERED), commit("Trim the mission"))])
    loop(repo, 1)
    v = verification(repo, 1)
    assert [d["kind"] for d in v["discrepancies"]] == ["task_tampered"]
    assert "'beta'" in v["discrepancies"][0]["detail"]
    assert v["restored"] == ["MISSION.md"]
    assert v["tasks"]["added"] == ["delta"]
    assert read(repo, "MISSION.md") == RESTORED
    assert committed(repo, "MISSION.md") == RESTORED
    author, subject = last_commit(repo)
    assert author == "dun" and subject.startswith("dun: restore")
    assert dirty(repo) == ""


def test_a_reworded_box_gets_its_original_text_back(repo: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo)
    reworded = MISSION.replace("- [ ] beta", "- [ ] beta (not needed any more)") + "\nMore notes.\n"
    scenario(tmp_path, monkeypatch, [step(wr("MISSION.md", reworded), commit("Reword"))])
    loop(repo, 1)
    v = verification(repo, 1)
    assert [d["kind"] for d in v["discrepancies"]] == ["task_tampered"]
    assert read(repo, "MISSION.md") == MISSION + "\nMore notes.\n"
    assert last_commit(repo)[0] == "dun"


def test_a_reworded_box_below_an_added_one_gets_its_original_text_back(repo: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo)
    edited = "# Mission\n\n- [ ] zero\n- [ ] alpha\n- [ ] beta (later)\n- [ ] gamma\n"
    scenario(tmp_path, monkeypatch, [step(wr("MISSION.md", edited), commit("Reword"))])
    loop(repo, 1)
    assert kinds(repo, 1) == ["task_tampered"]
    assert read(repo, "MISSION.md") == "# Mission\n\n- [ ] zero\n- [ ] alpha\n- [ ] beta\n- [ ] gamma\n"


def test_a_removed_box_and_an_unverified_tick_below_it_are_both_undone(repo: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    mission = "# Mission\n\n- [ ] alpha\n- [ ] beta\n  verify: false\n- [ ] gamma\n"
    make_repo(repo, mission=mission)
    edited = "# Mission\n\n- [x] beta\n  verify: false\n- [ ] gamma\n"
    scenario(tmp_path, monkeypatch, [step(wr("MISSION.md", edited), commit("Cut and tick"))])
    loop(repo, 1)
    assert kinds(repo, 1) == ["task_tampered", "unverified_completion"]
    assert read(repo, "MISSION.md") == mission


def test_a_deleted_mission_file_comes_back_with_its_boxes_in_order(repo: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo)
    scenario(tmp_path, monkeypatch, [step({"delete": "MISSION.md"}, commit("Mission accomplished"))])
    loop(repo, 1)
    assert kinds(repo, 1) == ["task_tampered"] * 3
    assert verification(repo, 1)["restored"] == ["MISSION.md"]
    boxes = [line for line in read(repo, "MISSION.md").splitlines() if line.startswith("- [")]
    assert boxes == ["- [ ] alpha", "- [ ] beta", "- [ ] gamma"]


def test_a_restore_is_not_committed_over_the_agents_uncommitted_work(repo: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo)
    start = head(repo)
    scenario(tmp_path, monkeypatch, [step(wr("MISSION.md", TAMPERED))])  # not committed
    loop(repo, 1)
    assert [d["kind"] for d in verification(repo, 1)["discrepancies"]] == ["task_tampered"]
    assert read(repo, "MISSION.md") == RESTORED  # the box is back in the work tree
    assert head(repo) == start  # but the agent's paragraph is not committed in dun's name
    assert committed(repo, "MISSION.md") == MISSION


def test_task_tamper_flag_records_and_restores_nothing(repo: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, trust={"on_task_tamper": "flag"})
    scenario(tmp_path, monkeypatch, [step(wr("MISSION.md", TAMPERED), commit("Trim the mission"))])
    loop(repo, 1)
    v = verification(repo, 1)
    assert [d["kind"] for d in v["discrepancies"]] == ["task_tampered"]
    assert v["restored"] == []
    assert read(repo, "MISSION.md") == TAMPERED
    assert last_commit(repo) == ("fake-agent", "Trim the mission")
    assert state(repo)["stop_reason"] == "max_iterations"


def test_task_tamper_stop_ends_the_run(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, trust={"on_task_tamper": "stop"}, max_iterations=5)
    sc = scenario(tmp_path, monkeypatch, [step(wr("MISSION.md", TAMPERED), commit("Trim the mission"),
                                               repeat=True)])
    done = loop(repo, 1)
    s = state(repo)
    assert (s["status"], s["stop_reason"], s["iteration"]) == ("stopped", "task_tampered", 1)
    assert len(calls(sc)) == 1
    assert log(repo, 1)["decision"] == {"action": "stop", "reason": "task_tampered", "wait_s": 0.0}
    assert kinds(repo, 1) == ["task_tampered"]
    assert verification(repo, 1)["restored"] == []
    assert read(repo, "MISSION.md") == TAMPERED
    assert "stopped: task_tampered" in done.stderr


def test_added_boxes_are_allowed_and_listed(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo)
    scenario(tmp_path, monkeypatch, [step({"append": "MISSION.md", "content": "- [ ] delta\n- [ ] epsilon\n"},
                                          commit("Plan more"))])
    loop(repo, 1)
    v = verification(repo, 1)
    assert v["discrepancies"] == []
    assert v["tasks"]["added"] == ["delta", "epsilon"]
    assert v["restored"] == []
    assert last_commit(repo) == ("fake-agent", "Plan more")


# --------------------------------------------------------------------------------------------------------------------
# checker_tampered


def test_a_weakened_manifest_is_reverted(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, files={".dun/plugins/x.yaml": GREET})
    scenario(tmp_path, monkeypatch, [step(wr(".dun/plugins/x.yaml", WEAK), commit("Simplify the check"),
                                          task="greet", status="COMPLETE")])
    loop(repo, 1)
    v = verification(repo, 1)
    # the claim is judged by the checks the run started with, not by the weakened manifest
    assert [d["kind"] for d in v["discrepancies"]] == ["unverified_completion", "checker_tampered"]
    tampered = v["discrepancies"][1]
    assert tampered["paths"] == [".dun/plugins/x.yaml"]
    assert v["reverted"] == [".dun/plugins/x.yaml"]
    assert read(repo, ".dun/plugins/x.yaml") == GREET
    assert committed(repo, ".dun/plugins/x.yaml") == GREET
    author, subject = last_commit(repo)
    assert author == "dun" and subject.startswith("dun: revert")
    assert dirty(repo) == ""
    after = log(repo, 1)
    assert "greet" in after["checks_after"]["ids"]  # judged on the repaired state
    assert after["progress"]["newly_passing"] == []


def test_an_edited_config_is_reverted(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, files={".dun/plugins/x.yaml": GREET})
    original = read(repo, ".dun/config.yaml")
    weakened = json.loads(original)
    weakened["plugins"]["disabled"] = ["python", "x", "mission"]
    scenario(tmp_path, monkeypatch, [step(wr(".dun/config.yaml", json.dumps(weakened)), commit("Tidy config"))])
    loop(repo, 1)
    v = verification(repo, 1)
    assert kinds(repo, 1) == ["checker_tampered"]
    assert v["discrepancies"][0]["paths"] == [".dun/config.yaml"]
    assert v["reverted"] == [".dun/config.yaml"]
    assert read(repo, ".dun/config.yaml") == original
    assert last_commit(repo)[0] == "dun"


def test_a_deleted_manifest_comes_back_and_a_new_one_goes(repo: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, files={".dun/plugins/x.yaml": GREET})
    other = WEAK.replace("id: x", "id: y").replace("greet", "hello")
    scenario(tmp_path, monkeypatch, [step({"delete": ".dun/plugins/x.yaml"}, wr(".dun/plugins/y.yaml", other),
                                          commit("Replace the check"), files=2)])
    loop(repo, 1)
    v = verification(repo, 1)
    assert kinds(repo, 1) == ["checker_tampered"]
    assert v["reverted"] == [".dun/plugins/x.yaml", ".dun/plugins/y.yaml"]
    assert read(repo, ".dun/plugins/x.yaml") == GREET
    assert not (repo / ".dun" / "plugins" / "y.yaml").exists()
    assert last_commit(repo)[0] == "dun"
    assert dirty(repo) == ""


def test_a_plugin_hidden_by_git_info_exclude_is_caught_and_removed(repo: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, files={".dun/plugins/x.yaml": GREET})
    planted = "id: y\nchecks:\n  - id: always\n    type: command\n    command: 'true'\n"
    scenario(tmp_path, monkeypatch, [step({"append": ".git/info/exclude", "content": ".dun/plugins/y.yaml\n"},
                                          wr(".dun/plugins/y.yaml", planted), files=None)])
    loop(repo, 1)
    v = verification(repo, 1)
    assert kinds(repo, 1) == ["checker_tampered"]
    assert v["discrepancies"][0]["paths"] == [".dun/plugins/y.yaml"]
    assert v["reverted"] == [".dun/plugins/y.yaml"] and not (repo / ".dun/plugins/y.yaml").exists()


def test_tool_dun_in_pyproject_is_fingerprinted(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = "[project]\nname = 'p'\n\n[tool.dun.loop]\nmax_iterations = 3\n"
    make_repo(repo, files={"pyproject.toml": project})
    weakened = project.replace("max_iterations = 3", "max_iterations = 3\n[tool.dun.plugins]\ndisabled = ['mission']")
    scenario(tmp_path, monkeypatch, [step(wr("pyproject.toml", weakened), commit("tidy"))])
    loop(repo, 1)
    v = verification(repo, 1)
    assert kinds(repo, 1) == ["checker_tampered"]
    assert v["discrepancies"][0]["paths"] == ["pyproject.toml [tool.dun]"]
    assert v["reverted"] == ["pyproject.toml"] and read(repo, "pyproject.toml") == project


def test_a_deleted_fingerprint_is_a_tamper_not_a_fresh_baseline(repo: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, files={".dun/plugins/x.yaml": GREET}, max_iterations=2)
    planted = "id: y\nchecks:\n  - id: always\n    type: command\n    command: 'true'\n"
    scenario(tmp_path, monkeypatch, [step({"delete": ".dun/fingerprint.json"}, wr(".dun/plugins/y.yaml", planted),
                                          commit("plugins")),
                                     step(wr("notes.txt", "n\n"), commit("notes"))])
    loop(repo, 1)
    found = verification(repo, 1)["discrepancies"]
    assert [(d["kind"], d["paths"]) for d in found] == [("checker_tampered", [".dun/plugins/y.yaml"]),
                                                       ("checker_tampered", [".dun/fingerprint.json"])]
    assert "was deleted" in found[1]["detail"]
    assert not (repo / ".dun/plugins/y.yaml").exists() and (repo / ".dun/fingerprint.json").is_file()
    assert kinds(repo, 2) == []  # the baseline is dun's again: nothing carried over


def test_a_config_the_operator_commits_between_runs_is_the_new_baseline(repo: Path, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, max_iterations=1)
    scenario(tmp_path, monkeypatch, [step(tick("alpha"), commit("Do alpha"), task="alpha"),
                                     step(tick("beta"), commit("Do beta"), task="beta"),
                                     step(tick("gamma"), commit("Do gamma"), task="gamma", exit=True)])
    loop(repo, 1)  # stops max_iterations: the next `dun loop` resumes the same run
    cfg = json.loads(read(repo, ".dun/config.yaml"))
    cfg["loop"]["max_iterations"] = 5
    write(repo, ".dun/config.yaml", json.dumps(cfg, indent=1) + "\n")
    git(repo, "commit", "-qam", "Let it run longer")
    done = loop(repo, 0)
    assert "changed since the last run, taken as the new baseline: .dun/config.yaml" in done.stderr
    assert state(repo)["stop_reason"] == "complete"
    assert [kinds(repo, n) for n in (2, 3)] == [[], []]
    assert json.loads(read(repo, ".dun/config.yaml"))["loop"]["max_iterations"] == 5
    assert "dun: revert" not in git(repo, "log", "--format=%s")


def test_a_change_between_iterations_is_the_operators(repo: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The shell driver's steps by hand: the operator edits a manifest while no agent runs."""
    make_repo(repo, files={".dun/plugins/x.yaml": GREET}, max_iterations=2)
    sc = scenario(tmp_path, monkeypatch, [step(wr("a.txt", "a\n"), commit("a")), step(wr("b.txt", "b\n"))])

    def iteration(n: int) -> subprocess.CompletedProcess[str]:
        before = dun(repo, "respond", "--decide", "--before")
        assert before.stdout.strip() == f"go {n}", before.stderr
        prompt = (repo / ".dun" / "logs" / f"iteration-{n}.prompt.md").read_text(encoding="utf-8")
        out = subprocess.run(FAKE_COMMAND, cwd=repo, input=prompt, capture_output=True, text=True, timeout=30)
        (repo / ".dun" / "logs" / f"iteration-{n}.out").write_text(out.stdout, encoding="utf-8")
        dun(repo, "respond", "--decide", "--iteration", str(n), "--exit-code", "0")
        return before

    iteration(1)
    write(repo, ".dun/plugins/x.yaml", GREET.replace("greet.txt", "hello.txt"))
    git(repo, "commit", "-qam", "The greeting file is hello.txt")
    said = iteration(2).stderr  # the shell driver's step starts (resumes) the run: its start names the change
    assert "changed since the last iteration, taken as the new baseline: .dun/plugins/x.yaml" in said
    assert len(calls(sc)) == 2 and kinds(repo, 2) == []
    assert log(repo, 2)["baseline_changes"] == [".dun/plugins/x.yaml"]
    dun(repo, "respond", "--decide", "--before")  # max_iterations: the stop writes the report
    assert "- before iteration 2: .dun/plugins/x.yaml" in read(repo, ".dun/REPORT.md")
    assert "hello.txt" in read(repo, ".dun/plugins/x.yaml")


def test_checker_tamper_flag_records_and_reverts_nothing(repo: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, files={".dun/plugins/x.yaml": GREET}, trust={"on_checker_tamper": "flag"})
    scenario(tmp_path, monkeypatch, [step(wr(".dun/plugins/x.yaml", WEAK), commit("Simplify the check"))])
    loop(repo, 1)
    v = verification(repo, 1)
    assert kinds(repo, 1) == ["checker_tampered"]
    assert v["reverted"] == []
    assert read(repo, ".dun/plugins/x.yaml") == WEAK
    assert last_commit(repo) == ("fake-agent", "Simplify the check")


def test_checker_tamper_stop_ends_the_run(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, files={".dun/plugins/x.yaml": GREET}, trust={"on_checker_tamper": "stop"}, max_iterations=5)
    sc = scenario(tmp_path, monkeypatch, [step(wr(".dun/plugins/x.yaml", WEAK), commit("Simplify the check"),
                                               repeat=True)])
    loop(repo, 1)
    s = state(repo)
    assert (s["status"], s["stop_reason"], s["iteration"]) == ("stopped", "checker_tampered", 1)
    assert len(calls(sc)) == 1
    assert kinds(repo, 1) == ["checker_tampered"]
    assert verification(repo, 1)["reverted"] == []


def test_a_modified_protected_file_is_flagged_and_reverted(repo: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, files={"tests/test_a.py": FAILING_TEST}, trust={"protected": ["tests/**"]})
    scenario(tmp_path, monkeypatch, [step(wr("tests/test_a.py", PASSING_TEST), commit("Fix the test"))])
    loop(repo, 1)
    v = verification(repo, 1)
    assert kinds(repo, 1) == ["checker_tampered"]
    assert v["discrepancies"][0]["paths"] == ["tests/test_a.py"]
    assert read(repo, "tests/test_a.py") == FAILING_TEST
    assert last_commit(repo)[0] == "dun"


def test_adding_a_file_under_a_protected_glob_is_fine(repo: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, files={"tests/test_a.py": PASSING_TEST}, trust={"protected": ["tests/**"]})
    scenario(tmp_path, monkeypatch, [step(wr("tests/test_b.py", PASSING_TEST), commit("Add a test"))])
    loop(repo, 1)
    v = verification(repo, 1)
    assert v["discrepancies"] == [] and v["reverted"] == []
    assert read(repo, "tests/test_b.py") == PASSING_TEST
    assert last_commit(repo) == ("fake-agent", "Add a test")


# --------------------------------------------------------------------------------------------------------------------
# tests_removed


def test_deleting_the_failing_test_to_turn_the_check_green(repo: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, files={".dun/plugins/suite.yaml": TESTS_CHECK, "tests/test_ok.py": PASSING_TEST,
                           "tests/test_bad.py": FAILING_TEST})
    scenario(tmp_path, monkeypatch, [step({"delete": "tests/test_bad.py"}, commit("Remove a flaky test"),
                                          task="suite-tests", status="COMPLETE")])
    loop(repo, 1)
    entry = log(repo, 1)
    assert entry["progress"]["newly_passing"] == ["suite-tests"]
    found = entry["verification"]["discrepancies"]
    assert [d["kind"] for d in found] == ["tests_removed"]
    assert found[0]["deleted"] == ["tests/test_bad.py"]
    assert (found[0]["count_before"], found[0]["count_after"]) == (2, 1)


def test_deleting_a_failing_test_function_to_turn_the_check_green(repo: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, files={".dun/plugins/suite.yaml": TESTS_CHECK, "tests/test_x.py": PASSING_TEST + FAILING_TEST})
    scenario(tmp_path, monkeypatch, [step(wr("tests/test_x.py", PASSING_TEST), commit("Simplify the tests"))])
    loop(repo, 1)
    found = verification(repo, 1)["discrepancies"]
    assert [d["kind"] for d in found] == ["tests_removed"]
    assert found[0]["deleted"] == []
    assert (found[0]["count_before"], found[0]["count_after"]) == (2, 1)


def test_fixing_the_failing_test_is_not_removing_it(repo: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, files={".dun/plugins/suite.yaml": TESTS_CHECK, "tests/test_ok.py": PASSING_TEST,
                           "tests/test_bad.py": FAILING_TEST})
    fixed = FAILING_TEST.replace("assert False", "assert 1 + 1 == 2")
    scenario(tmp_path, monkeypatch, [step(wr("tests/test_bad.py", fixed), commit("Fix the test"),
                                          task="suite-tests", status="COMPLETE")])
    loop(repo, 1)
    entry = log(repo, 1)
    assert entry["progress"]["newly_passing"] == ["suite-tests"]
    assert entry["verification"]["discrepancies"] == []


# --------------------------------------------------------------------------------------------------------------------
# oscillation and the circuit


def test_oscillating_between_two_trees_opens_the_circuit(repo: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, max_iterations=10)
    a, b = step(wr("f.txt", "A\n")), step(wr("f.txt", "B\n"))
    sc = scenario(tmp_path, monkeypatch, [a, b, a, b, a, b, a, b])
    loop(repo, 1)
    s = state(repo)
    assert (s["stop_reason"], s["iteration"]) == ("circuit_open", 4)
    assert (s["circuit"]["state"], s["circuit"]["reason"]) == ("OPEN", "oscillation")
    assert len(calls(sc)) == 4
    assert [kinds(repo, n) for n in (1, 2, 3, 4)] == [[], [], ["oscillation"], ["oscillation"]]
    assert all(log(repo, n)["progress"]["files_changed"] for n in (1, 2, 3, 4))
    assert s["circuit"]["no_progress"] == 0  # every iteration changed the tree: not no_progress


def test_only_the_agents_own_moves_can_oscillate() -> None:
    from dun.store.state import LoopState
    from dun.trust.verify import oscillated, remember_tree

    s = LoopState()
    for tree, by_dun in (("A", False), ("B", False), ("R", True), ("C", False)):
        remember_tree(s, 6, tree, by_dun)
    assert oscillated(s, 6, "C", "B", True)  # back to where the agent had left it
    assert not oscillated(s, 6, "C", "R", True)  # back to dun's restore: accepted it
    assert not oscillated(s, 6, "C", "C", True)  # changed nothing (a crash, a timeout)
    assert not oscillated(s, 6, "C", "B", False)  # every check passes
    remember_tree(s, 1, "D", False)
    assert s.trees == ["C", "D"] and s.dun_trees == ["R"]


def test_distinct_trees_are_not_an_oscillation(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, max_iterations=4)
    scenario(tmp_path, monkeypatch, [step(wr("f.txt", f"{i}\n")) for i in range(4)])
    loop(repo, 1)
    assert state(repo)["stop_reason"] == "max_iterations"
    assert [kinds(repo, n) for n in (1, 2, 3, 4)] == [[], [], [], []]
    assert state(repo)["circuit"]["state"] == "CLOSED"


def test_three_iterations_with_discrepancies_open_the_circuit(repo: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, files={".dun/plugins/x.yaml": GREET}, max_iterations=10)
    sc = scenario(tmp_path, monkeypatch, [step(wr(f"n{i}.txt", "n\n"), commit(f"n{i}"), task="greet",
                                               status="COMPLETE") for i in range(6)])
    loop(repo, 1)
    s = state(repo)
    assert (s["stop_reason"], s["iteration"]) == ("circuit_open", 3)
    assert (s["circuit"]["state"], s["circuit"]["reason"]) == ("OPEN", "untrustworthy")
    assert len(calls(sc)) == 3
    assert [kinds(repo, n) for n in (1, 2, 3)] == [["unverified_completion"]] * 3
    assert [log(repo, n)["circuit"]["discrepancies"] for n in (1, 2, 3)] == [1, 2, 3]
    assert "circuit: OPEN (untrustworthy)" in (repo / ".dun" / "REPORT.md").read_text(encoding="utf-8")


def test_an_honest_iteration_resets_the_discrepancy_count(repo: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, files={".dun/plugins/x.yaml": GREET}, max_iterations=4)
    lie = [step(wr(f"n{i}.txt", "n\n"), commit(f"n{i}"), task="greet", status="COMPLETE") for i in range(4)]
    scenario(tmp_path, monkeypatch, [lie[0], lie[1], step(wr("m.txt", "m\n"), commit("m")), lie[3]])
    loop(repo, 1)
    s = state(repo)
    assert (s["stop_reason"], s["circuit"]["state"]) == ("max_iterations", "CLOSED")
    assert [log(repo, n)["circuit"]["discrepancies"] for n in (1, 2, 3, 4)] == [1, 2, 0, 1]


# --------------------------------------------------------------------------------------------------------------------
# consequences


def test_the_next_prompt_logs_and_report_show_the_discrepancy(repo: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, files={".dun/plugins/x.yaml": GREET}, max_iterations=2)
    scenario(tmp_path, monkeypatch, [step(wr("notes.txt", "n\n"), commit(), task="greet", status="COMPLETE"),
                                     step(wr("greet.txt", "hi\n"), commit(), task="greet", status="COMPLETE")])
    loop(repo, 1)
    detail = verification(repo, 1)["discrepancies"][0]["detail"]
    assert detail.startswith("your previous claim 'greet' was not verified: check greet still fails")
    prompt2 = read(repo, ".dun/logs/iteration-2.prompt.md")
    assert f"NOT VERIFIED: {detail}" in prompt2
    assert "NOT VERIFIED" not in read(repo, ".dun/logs/iteration-1.prompt.md")
    assert verification(repo, 2)["discrepancies"] == []  # the second claim holds
    shown = dun(repo, "logs", "1")
    assert shown.returncode == 0, shown.stderr
    assert "unverified_completion" in shown.stdout
    line = next(x for x in shown.stdout.splitlines() if x.strip().startswith("verification:"))
    assert json.loads(line.split(":", 1)[1])["discrepancies"][0]["kind"] == "unverified_completion"
    assert "unverified_completion" in dun(repo, "logs").stdout.splitlines()[0]  # the verdict of iteration 1
    report = read(repo, ".dun/REPORT.md")
    section = report.split("## Claims dun could not verify", 1)[1]
    assert f"- iteration 1: `unverified_completion` {detail}" in section
    assert "iteration 2" not in section


def test_no_claims_section_when_everything_held(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(repo, files={".dun/plugins/x.yaml": GREET}, max_iterations=2)
    scenario(tmp_path, monkeypatch, [step(wr("notes.txt", "n\n"), commit()),
                                     step(wr("greet.txt", "hi\n"), commit(), task="greet", status="COMPLETE")])
    loop(repo, 1)
    assert "NOT VERIFIED" not in read(repo, ".dun/logs/iteration-2.prompt.md")
    assert "Claims dun could not verify" not in read(repo, ".dun/REPORT.md")


# --------------------------------------------------------------------------------------------------------------------
# an honest agent


def test_an_honest_three_box_mission_has_no_discrepancy_at_all(repo: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    mission = ("# Mission\n\n- [ ] make `greet` pass\n- [ ] alpha\n  verify: test -f alpha.txt\n"
               "- [ ] beta\n  verify: grep -q beta alpha.txt\n")
    make_repo(repo, mission=mission, files={".dun/plugins/x.yaml": GREET, "tests/test_a.py": PASSING_TEST},
              trust={"protected": ["tests/**"]}, max_iterations=6)
    sc = scenario(tmp_path, monkeypatch, [
        step(wr("greet.txt", "hi\n"), tick("greet"), commit("greet"), task="greet", status="COMPLETE", files=2),
        step(wr("alpha.txt", "alpha\n"), tick("alpha"), commit("alpha"), task="alpha", status="COMPLETE", files=2),
        step({"append": "alpha.txt", "content": "beta\n"}, wr("tests/test_b.py", PASSING_TEST), tick("beta"),
             commit("beta"), task="beta", status="COMPLETE", files=3, exit=True),
    ])
    loop(repo, 0)
    s = state(repo)
    assert (s["status"], s["stop_reason"], s["iteration"]) == ("complete", "complete", 3)
    assert len(calls(sc)) == 3
    for n in (1, 2, 3):
        v = verification(repo, n)
        assert v["discrepancies"] == [], (n, v)
        assert (v["notes"], v["restored"], v["reverted"]) == ([], [], []), (n, v)
        assert v["tasks"]["unverified"] == [] and v["tasks"]["added"] == []
    assert [verification(repo, n)["tasks"]["ticked"] for n in (1, 2, 3)] == [["make `greet` pass"], ["alpha"],
                                                                           ["beta"]]
    assert s["circuit"]["discrepancies"] == 0 and s["circuit"]["oscillations"] == 0
    assert git(repo, "log", "--format=%an", "-3").split() == ["fake-agent"] * 3
    assert "Claims dun could not verify" not in read(repo, ".dun/REPORT.md")
    assert "NOT VERIFIED" not in read(repo, ".dun/logs/iteration-3.prompt.md")


# --------------------------------------------------------------------------------------------------------------------
# dun's own commits


def test_repairs_are_committed_as_dun_whatever_the_environment_says(repo: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    for var, value in GIT_ENV.items():
        monkeypatch.setenv(var, value)
    make_repo(repo)
    scenario(tmp_path, monkeypatch, [step(wr("MISSION.md", TAMPERED), commit("Trim the mission"))])
    loop(repo, 1)
    assert verification(repo, 1)["restored"] == ["MISSION.md"]
    assert git(repo, "log", "-1", "--format=%an|%cn").strip() == "dun|dun"
