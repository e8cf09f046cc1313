"""The launchd agent: a plist that parses, a calendar launchd can express, and a wrapper that really loads the env
file, maps dun's exit codes and passes a stop signal on (run here with /bin/sh)."""

from __future__ import annotations

import plistlib
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from service_support import invoke

from dun.core.errors import UsageError
from dun.service.launchd import WRAPPER, calendar_interval
from dun.service.spec import service_name


def plist_of(home: Path, repo: Path) -> dict[str, object]:
    data = plistlib.loads((home / "Library" / "LaunchAgents" / f"{service_name(repo)}.plist").read_bytes())
    assert isinstance(data, dict)
    return data


def test_plist_parses_and_runs_the_loop_through_the_wrapper(repo: Path, isolated_home: Path) -> None:
    code, out, err = invoke(["service", "install", "-C", str(repo), "--platform", "launchd", "--no-enable",
                             "--timer", "Mon 02:30", "--", "--max-iterations", "3"])
    assert code == 0, err
    doc = plist_of(isolated_home, repo)
    assert doc["Label"] == service_name(repo)
    args = doc["ProgramArguments"]
    assert isinstance(args, list) and args[:3] == ["/bin/sh", "-c", WRAPPER]
    assert args[3] == str(isolated_home / ".config" / "dun" / "service.env")
    assert args[4:] == [sys.executable, "-m", "dun", "loop", "-C", str(repo), "--max-iterations", "3"]
    assert doc["StartCalendarInterval"] == {"Weekday": 1, "Hour": 2, "Minute": 30}
    assert doc["RunAtLoad"] is False and doc["KeepAlive"] == {"SuccessfulExit": False}
    log = isolated_home / "Library" / "Logs" / "dun" / f"{service_name(repo)}.log"
    assert doc["StandardOutPath"] == doc["StandardErrorPath"] == str(log)
    assert log.parent.is_dir(), "launchd does not create the log directory itself"
    assert "launchctl bootstrap gui/" in out  # printed, not run


def test_without_a_timer_the_agent_starts_at_login(repo: Path, isolated_home: Path) -> None:
    assert invoke(["service", "install", "-C", str(repo), "--platform", "launchd", "--no-enable"])[0] == 0
    doc = plist_of(isolated_home, repo)
    assert doc["RunAtLoad"] is True and "StartCalendarInterval" not in doc


@pytest.mark.parametrize(("spec", "expected"), [
    ("daily", {"Hour": 0, "Minute": 0}), ("hourly", {"Minute": 0}), ("07:05", {"Hour": 7, "Minute": 5}),
    ("*-*-* 23:59:00", {"Hour": 23, "Minute": 59}), ("fri 18:00", {"Weekday": 5, "Hour": 18, "Minute": 0}),
])
def test_calendar_subset(spec: str, expected: dict[str, int]) -> None:
    assert calendar_interval(spec) == expected


@pytest.mark.parametrize("spec", ["25:00", "Mon..Fri 02:00", "*-*-01 02:00:00", "Xyz 02:00", "minutely"])
def test_calendar_launchd_cannot_express_is_refused(spec: str) -> None:
    with pytest.raises(UsageError):
        calendar_interval(spec)


def wrapper(env_file: Path, *command: str) -> subprocess.Popen[str]:
    return subprocess.Popen(["/bin/sh", "-c", WRAPPER, str(env_file), *command], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize(("dun_exit", "wrapper_exit"), [(0, 0), (1, 0), (2, 0), (3, 3), (143, 143)])
def test_wrapper_loads_env_file_and_maps_exit_codes(tmp_path: Path, dun_exit: int, wrapper_exit: int) -> None:
    env_file = tmp_path / "service.env"
    env_file.write_text("# keys\nDUN_TEST_KEY='sk with space'\n")
    proc = wrapper(env_file, sys.executable, "-c",
                   f"import os, sys; print(os.environ['DUN_TEST_KEY']); sys.exit({dun_exit})")
    out, err = proc.communicate(timeout=60)
    assert out == "sk with space\n"
    assert proc.returncode == wrapper_exit, err
    assert f"dun loop exited {dun_exit}" in err


def test_wrapper_runs_without_an_env_file(tmp_path: Path) -> None:
    proc = wrapper(tmp_path / "missing.env", sys.executable, "-c", "print('ran')")
    assert proc.communicate(timeout=60)[0] == "ran\n" and proc.returncode == 0


def test_wrapper_passes_sigterm_to_dun_and_waits_for_it(tmp_path: Path) -> None:
    child = ("import signal, sys\n"
             "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})\n"
             "print('ready', flush=True)\n"
             "signal.sigwait({signal.SIGTERM})\n"
             "print('stopping cleanly', flush=True)\n"
             "sys.exit(143)\n")
    proc = wrapper(tmp_path / "none.env", sys.executable, "-c", child)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert out == "stopping cleanly\n", err
    assert proc.returncode == 143  # a stop by signal is not success: KeepAlive restarts it unless launchd stopped it
