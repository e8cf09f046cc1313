"""install, uninstall, status and --dry-run end to end, with a recording systemctl/launchctl on PATH: dun never
touches the real supervisor here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git
from service_support import calls, fake_tools, invoke, path_with, with_bus

from dun.service.spec import service_name


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A recording systemctl/launchctl first on PATH and no session bus: returns the calls log."""
    log = fake_tools(tmp_path / "fakebin", show="ActiveState=active\nSubState=running\nResult=success\n"
                                                "ExecMainStatus=0\nNRestarts=2\n")
    monkeypatch.setenv("PATH", path_with(tmp_path / "fakebin"))
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "no-bus"))
    return log


def unit_dir(home: Path) -> Path:
    return home / ".config" / "systemd" / "user"


def test_dry_run_prints_files_and_writes_nothing(repo: Path, isolated_home: Path, tools: Path) -> None:
    code, out, _ = invoke(["service", "install", "-C", str(repo), "--platform", "systemd", "--timer", "02:00",
                           "--dry-run"])
    assert code == 0
    name = service_name(repo)
    assert f"# {unit_dir(isolated_home) / name}.service\n" in out and "OnCalendar=02:00" in out
    assert f"systemctl --user enable --now {name}.timer" in out
    assert not unit_dir(isolated_home).exists() and calls(tools) == []


def test_install_without_a_session_bus_prints_the_commands(repo: Path, isolated_home: Path, tools: Path) -> None:
    code, out, _ = invoke(["service", "install", "-C", str(repo), "--platform", "systemd"])
    assert code == 0
    assert (unit_dir(isolated_home) / f"{service_name(repo)}.service").is_file()
    assert "no user session bus); run:" in out and "loginctl enable-linger" in out
    assert calls(tools) == []


def test_install_with_a_bus_enables_and_uninstall_disables(repo: Path, isolated_home: Path, tools: Path,
                                                           tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in with_bus(tmp_path / "run").items():
        monkeypatch.setenv(key, value)
    name = service_name(repo)
    code, out, _ = invoke(["service", "install", "-C", str(repo), "--platform", "systemd", "--timer", "daily"])
    assert code == 0, out
    assert calls(tools) == ["systemctl --user daemon-reload", f"systemctl --user enable --now {name}.timer"]
    # the fake reports systemd 252: no back-off keys it would not know
    assert "RestartSteps" not in (unit_dir(isolated_home) / f"{name}.service").read_text()
    tools.unlink()
    code, out, _ = invoke(["service", "uninstall", "-C", str(repo), "--platform", "systemd"])
    assert code == 0
    assert calls(tools) == [f"systemctl --user disable --now {name}.timer {name}.service",
                            "systemctl --user daemon-reload"]
    assert list(unit_dir(isolated_home).iterdir()) == []
    code, out, _ = invoke(["service", "uninstall", "-C", str(repo), "--platform", "systemd"])
    assert code == 0 and "not installed, nothing to remove" in out


def test_no_enable_wins_over_a_reachable_bus(repo: Path, tools: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in with_bus(tmp_path / "run").items():
        monkeypatch.setenv(key, value)
    assert invoke(["service", "install", "-C", str(repo), "--platform", "systemd", "--no-enable"])[0] == 0
    assert invoke(["service", "uninstall", "-C", str(repo), "--platform", "systemd", "--no-enable"])[0] == 0
    assert calls(tools) == []


def test_a_failing_supervisor_command_is_one_line_exit_2(repo: Path, tools: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in with_bus(tmp_path / "run").items():
        monkeypatch.setenv(key, value)
    (tmp_path / "fakebin" / "systemctl").write_text("#!/bin/sh\necho 'Failed to connect to bus' >&2\nexit 1\n")
    code, _, err = invoke(["service", "install", "-C", str(repo), "--platform", "systemd"])
    assert code == 2 and err == "dun: `systemctl --user daemon-reload` failed: Failed to connect to bus\n"


def test_status_reports_files_supervisor_and_loop(repo: Path, tools: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = invoke(["service", "status", "-C", str(repo), "--platform", "systemd"])
    assert code == 1 and "not installed" in out
    assert invoke(["service", "install", "-C", str(repo), "--platform", "systemd", "--no-enable",
                   "--log-file", str(tmp_path / "dun.log")])[0] == 0
    (repo / ".dun").mkdir(exist_ok=True)
    (repo / ".dun" / "state.json").write_text(json.dumps({"run_id": "abc", "status": "stopped", "iteration": 4,
                                                          "stop_reason": "budget", "cost_usd_total": 1.5}))
    code, out, _ = invoke(["service", "status", "-C", str(repo), "--platform", "systemd"])
    assert code == 0
    assert "timer:  none (runs continuously)" in out and "state:  unknown" in out
    assert "loop:   stopped, budget, iteration 4, $1.5000" in out and f"logs:   {tmp_path / 'dun.log'}" in out
    for key, value in with_bus(tmp_path / "run").items():
        monkeypatch.setenv(key, value)
    code, out, _ = invoke(["service", "status", "-C", str(repo), "--platform", "systemd", "--json"])
    info = json.loads(out)
    assert info["installed"] and info["supervisor"]["NRestarts"] == "2" and info["loop"]["iteration"] == 4
    assert info["loop_pid"] is None


def test_unit_names_are_unique_per_repository(tmp_path: Path) -> None:
    first, second = tmp_path / "a" / "app", tmp_path / "b" / "app"
    for root in (first, second):
        root.mkdir(parents=True)
        git(root, "init", "-q")
    assert service_name(first) != service_name(second)
    assert service_name(first) == service_name(first) and service_name(first).startswith("dun-loop-app-")


def test_the_cli_runs_as_a_real_process(repo: Path, isolated_home: Path) -> None:
    """The module entry point used in ExecStart (`python -m dun`) exposes the command."""
    proc = subprocess.run([sys.executable, "-m", "dun", "service", "install", "-C", str(repo), "--platform",
                           "launchd", "--dry-run"], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "<key>Label</key>" in proc.stdout and not (isolated_home / "Library").exists()


def test_launchd_reinstall_unloads_first_and_uninstall_tolerates_an_unloaded_job(
        repo: Path, isolated_home: Path, tools: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")  # launchctl is the recording fake
    name, domain = service_name(repo), f"gui/{os.getuid()}"
    plist = isolated_home / "Library" / "LaunchAgents" / f"{name}.plist"
    assert invoke(["service", "install", "-C", str(repo), "--platform", "launchd"])[0] == 0
    assert invoke(["service", "install", "-C", str(repo), "--platform", "launchd"])[0] == 0
    assert calls(tools) == [f"launchctl bootstrap {domain} {plist}", f"launchctl bootout {domain}/{name}",
                            f"launchctl bootstrap {domain} {plist}"]
    (tmp_path / "fakebin" / "launchctl").write_text("#!/bin/sh\necho 'Boot-out failed: 3: No such process' >&2\n"
                                                    "exit 3\n")
    code, out, _ = invoke(["service", "uninstall", "-C", str(repo), "--platform", "launchd"])
    assert code == 0 and "warning: `launchctl bootout" in out and "No such process" in out
    assert not plist.exists()


def test_a_systemd_reinstall_says_how_to_apply_it_to_a_running_loop(repo: Path, tools: Path) -> None:
    args = ["service", "install", "-C", str(repo), "--platform", "systemd", "--no-enable"]
    assert "keeps its old settings" not in invoke(args)[1]
    assert f"systemctl --user restart {service_name(repo)}.service" in invoke(args)[1]
