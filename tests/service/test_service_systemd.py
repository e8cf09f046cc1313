"""The systemd user unit and timer: verified by systemd-analyze, restart policy by exit code, secrets kept out."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from service_support import invoke

from dun.service.spec import ServiceSpec, service_name
from dun.service.systemd import exec_quote, render_service, render_timer

ANALYZE = shutil.which("systemd-analyze")


def verify(paths: list[Path], runtime: Path) -> subprocess.CompletedProcess[str]:
    if ANALYZE is None:
        pytest.skip("systemd-analyze is missing (Debian package `systemd`): unit files not verified")
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    return subprocess.run([ANALYZE, "--user", "verify", *map(str, paths)], capture_output=True, text=True,
                          env=env, timeout=60, check=False)


def unit_lines(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line and line[0] != "#")


def installed(home: Path, repo: Path, suffix: str) -> Path:
    return home / ".config" / "systemd" / "user" / f"{service_name(repo)}.{suffix}"


def test_installed_service_and_timer_verify_cleanly(repo: Path, isolated_home: Path, tmp_path: Path) -> None:
    code, out, err = invoke(["service", "install", "-C", str(repo), "--platform", "systemd", "--timer", "daily",
                             "--no-enable", "--", "--max-budget-usd", "5", "--agent", "claude"])
    assert code == 0, err
    service, timer = installed(isolated_home, repo, "service"), installed(isolated_home, repo, "timer")
    assert f"wrote {service}" in out and f"wrote {timer}" in out
    assert "systemctl --user enable --now " + timer.name in out  # printed, not run
    proc = verify([timer, service], tmp_path / "run")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    values = unit_lines(service)
    assert values["ExecStart"].split()[1:] == ["-m", "dun", "loop", "-C", str(repo), "--max-budget-usd", "5",
                                               "--agent", "claude"]
    assert values["WorkingDirectory"] == str(repo)
    assert "WantedBy" not in values, "a timer-started service must not also start at login"
    assert unit_lines(timer)["OnCalendar"] == "daily"
    assert unit_lines(timer)["Unit"] == service.name


def test_restart_policy_follows_dun_exit_codes(repo: Path, isolated_home: Path, tmp_path: Path) -> None:
    assert invoke(["service", "install", "-C", str(repo), "--platform", "systemd", "--no-enable"])[0] == 0
    values = unit_lines(installed(isolated_home, repo, "service"))
    # 0 complete, 1 stopped with work left, 2 usage/config error: never restarted
    assert values["Restart"] == "always"
    assert set(values["RestartPreventExitStatus"].split()) == {"0", "1", "2"}
    # exit 1 and a stop by signal (130/143) are not failures of the unit; 3 is, and is restarted after RestartSec
    assert set(values["SuccessExitStatus"].split()) == {"1", "130", "143"}
    assert "3" not in values["RestartPreventExitStatus"].split() and values["RestartSec"] == "1min"
    assert values["KillMode"] == "mixed" and values["WantedBy"] == "default.target"
    assert values["StandardOutput"] == "journal"
    proc = verify([installed(isolated_home, repo, "service")], tmp_path / "run")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_backoff_keys_only_for_systemd_that_knows_them(tmp_path: Path) -> None:
    spec = ServiceSpec("dun-loop-x-1", tmp_path, [sys.executable, "-m", "dun", "loop"], tmp_path / "env", None, None)
    assert "RestartSteps=" not in render_service(spec, 252) and "RestartSteps=" not in render_service(spec, None)
    assert "RestartSteps=6\nRestartMaxDelaySec=1h" in render_service(spec, 254)


def test_api_keys_stay_in_the_env_file(repo: Path, isolated_home: Path, tmp_path: Path) -> None:
    env_file = tmp_path / "keys.env"
    env_file.write_text("ANTHROPIC_API_KEY=sk-test-secret-123\n")
    env_file.chmod(0o644)
    code, out, _ = invoke(["service", "install", "-C", str(repo), "--platform", "systemd", "--no-enable",
                           "--env-file", str(env_file), "--log-file", str(tmp_path / "logs" / "dun.log")])
    assert code == 0
    unit = installed(isolated_home, repo, "service").read_text()
    assert "sk-test-secret" not in unit and "ANTHROPIC_API_KEY" not in unit
    assert f"EnvironmentFile=-{env_file}\n" in unit
    assert f"readable by other users; `chmod 600 {env_file}`" in out
    log = tmp_path / "logs" / "dun.log"
    assert f"StandardOutput=append:{log}\nStandardError=append:{log}\n" in unit
    assert log.parent.is_dir() and f"logs: {log}" in out


def test_env_file_comes_from_config_relative_to_the_root(repo: Path, isolated_home: Path) -> None:
    (repo / ".dun").mkdir()
    (repo / ".dun" / "config.yaml").write_text("service:\n  env_file: ~/secrets/dun.env\n")
    assert invoke(["service", "install", "-C", str(repo), "--platform", "systemd", "--no-enable"])[0] == 0
    unit = installed(isolated_home, repo, "service").read_text()
    assert f"EnvironmentFile=-{isolated_home}/secrets/dun.env\n" in unit


def test_paths_with_spaces_percent_and_dollar_survive_quoting(tmp_path: Path) -> None:
    odd = tmp_path / "bin dir %i $HOME"
    odd.mkdir()
    exe = odd / "python"
    exe.symlink_to(sys.executable)
    root = tmp_path / "my repo"
    root.mkdir()
    spec = ServiceSpec("dun-loop-odd-1", root, [str(exe), "-m", "dun", "loop", str(root), "--model", 'a "b" c'],
                       tmp_path / "k %h.env", None, "Mon *-*-* 02:00:00")
    unit_dir = tmp_path / "units"
    unit_dir.mkdir()
    (unit_dir / "dun-loop-odd-1.service").write_text(render_service(spec, None))
    (unit_dir / "dun-loop-odd-1.timer").write_text(render_timer(spec))
    # verify fails with "is not executable" unless the quoted, escaped executable path reads back exactly
    proc = verify([unit_dir / "dun-loop-odd-1.service", unit_dir / "dun-loop-odd-1.timer"], tmp_path / "run")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert exec_quote("a b%c$d") == '"a b%%c$$d"' and exec_quote("--plain") == "--plain"


def test_bad_timer_and_bad_loop_arguments_fail_before_writing(repo: Path, isolated_home: Path) -> None:
    unit_dir = isolated_home / ".config" / "systemd" / "user"
    if ANALYZE is not None:
        code, _, err = invoke(["service", "install", "-C", str(repo), "--platform", "systemd", "--no-enable",
                               "--timer", "every full moon"])
        assert code == 2 and "invalid --timer calendar expression" in err
    code, _, err = invoke(["service", "install", "-C", str(repo), "--no-enable", "--", "--max-budgt", "5"])
    assert code == 2 and "No such option '--max-budgt'" in err
    code, _, err = invoke(["service", "install", "-C", str(repo), "--no-enable", "--", str(repo)])
    assert code == 2 and "not among the loop arguments" in err
    assert not unit_dir.exists()
