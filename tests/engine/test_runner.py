from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import write

from dun.cli.commands.check import CheckOptions, build_report
from dun.core.errors import UsageError
from dun.engine.checkapi import CheckContext, CheckSpec, CheckType
from dun.engine.hookspecs import hookimpl
from dun.engine.manager import make_manager
from dun.engine.model import Level, Outcome, Status, level_for
from dun.engine.session import Session, open_session

RELEASE = threading.Event()


class TestTypes:
    """A Python plugin adding check types that crash or hang, registered like any third-party plugin."""

    @hookimpl
    def dun_check_types(self) -> list[CheckType]:
        def crash(spec: CheckSpec, ctx: CheckContext) -> Outcome:
            raise ZeroDivisionError("boom in plugin")

        def hang(spec: CheckSpec, ctx: CheckContext) -> Outcome:
            RELEASE.wait(30)
            return Outcome(Status.PASS, "released")

        return [CheckType("crash", "always raises", {}, crash), CheckType("hang", "blocks", {}, hang)]


def session_with(repo: Path, *plugins: Any) -> Session:
    session = open_session(repo)
    session.pm = make_manager(entry_points=False, extra=plugins)
    return session


def test_levels_spread_by_priority_and_status() -> None:
    assert level_for(10, Status.FAIL) is Level.HIGH
    assert level_for(10, Status.ERROR) is Level.HIGH
    assert level_for(50, Status.FAIL) is Level.MEDIUM
    assert level_for(90, Status.FAIL) is Level.LOW
    assert level_for(10, Status.WARN) is Level.MEDIUM
    assert level_for(50, Status.WARN) is Level.LOW
    assert level_for(10, Status.PASS) is None


def test_order_is_plugin_priority_then_check_priority_then_id(repo: Path) -> None:
    write(repo, ".dun/config.yaml", "plugins:\n  disabled: [git]\n")
    write(repo, ".dun/plugins/late.yaml", """\
id: late
priority: 90
checks:
  - {id: a-late, type: files, rule: path-exists, paths: [nope]}
""")
    write(repo, ".dun/plugins/early.yaml", """\
id: early
priority: 5
checks:
  - {id: zz, type: files, rule: path-exists, paths: [nope]}
  - {id: bb, type: files, rule: path-exists, paths: [nope], priority: 60}
  - {id: aa, type: files, rule: path-exists, paths: [nope], priority: 60}
""")
    report = build_report(open_session(repo), CheckOptions(only=["early", "late"]))
    assert [r.id for r in report.results] == ["zz", "aa", "bb", "a-late"]
    assert [r.level for r in report.results] == [Level.HIGH, Level.MEDIUM, Level.MEDIUM, Level.LOW]


def test_crashing_check_becomes_error_and_run_goes_on(repo: Path) -> None:
    write(repo, ".dun/plugins/p.yaml", "id: p\nchecks:\n  - {id: bad, type: crash}\n"
                                       "  - {id: good, type: files, rule: path-exists, paths: [README.md]}\n")
    report = build_report(session_with(repo, TestTypes()), CheckOptions(only=["p"]))
    by_id = {r.id: r for r in report.results}
    assert by_id["bad"].status is Status.ERROR
    assert by_id["bad"].signal == "check crashed: ZeroDivisionError: boom in plugin"
    assert by_id["good"].status is Status.PASS


def test_a_hung_check_times_out_without_holding_the_others(repo: Path, monkeypatch: Any) -> None:
    import dun.engine.runner

    monkeypatch.setattr(dun.engine.runner, "TIMEOUT_GRACE_S", 0.0)
    RELEASE.clear()
    write(repo, ".dun/plugins/p.yaml", "id: p\nchecks:\n  - {id: stuck, type: hang, timeout: 0.3}\n"
                                       "  - {id: fine, type: files, rule: path-exists, paths: [README.md]}\n")
    try:
        report = build_report(session_with(repo, TestTypes()), CheckOptions(only=["p"]))
    finally:
        RELEASE.set()
    by_id = {r.id: r for r in report.results}
    assert by_id["stuck"].status is Status.ERROR
    assert by_id["stuck"].signal == "timed out after 0.3s"
    assert by_id["fine"].status is Status.PASS


def test_independent_checks_really_run_concurrently(repo: Path) -> None:
    # Each check marks itself started, then waits until all four have started: only possible concurrently.
    cmd = "touch .s-{n}; i=0; while [ $(ls .s-* | wc -l) -lt 4 ]; do i=$((i+1)); [ $i -gt 400 ] && exit 1; " \
          "sleep 0.05; done"
    checks = "".join(f"  - {{id: c{n}, type: command, command: '{cmd.format(n=n)}'}}\n" for n in range(4))
    write(repo, ".dun/plugins/p.yaml", "id: p\nchecks:\n" + checks)
    report = build_report(open_session(repo), CheckOptions(only=["p"], jobs=4))
    assert [r.status for r in report.results] == [Status.PASS] * 4


def test_after_orders_dependent_checks(repo: Path) -> None:
    write(repo, ".dun/plugins/p.yaml", """\
id: p
checks:
  - {id: consumer, type: files, rule: path-exists, paths: [made.txt], after: [producer]}
  - {id: producer, type: command, command: 'sleep 0.2; echo hi > made.txt'}
""")
    report = build_report(open_session(repo), CheckOptions(only=["p"]))
    assert {r.id: r.status for r in report.results} == {"consumer": Status.PASS, "producer": Status.PASS}


def test_triggers_skip_plugins_that_do_not_apply(repo: Path) -> None:
    write(repo, ".dun/plugins/p.yaml", """\
id: p
triggers:
  - path-exists: Cargo.toml
  - glob-exists: "**/*.rs"
checks:
  - {id: rusty, type: files, rule: path-exists, paths: [Cargo.toml]}
""")
    (result,) = build_report(open_session(repo), CheckOptions(only=["rusty"])).results
    assert result.status is Status.SKIP
    assert "no trigger matched" in result.signal
    write(repo, "src/deep/lib.rs", "fn main() {}\n")
    (result,) = build_report(open_session(repo), CheckOptions(only=["rusty"])).results
    assert result.status is Status.FAIL


def test_a_plugin_whose_files_are_missing_is_skipped_without_a_thread(repo: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Path-exists triggers are decided as the check is scheduled (a stat each); only a check that applies, or
    whose triggers need the listing, gets a thread. The skip reads the same either way."""
    write(repo, ".dun/plugins/p.yaml", """\
id: p
triggers: [{path-exists: Cargo.toml}, {path-exists: rust-toolchain}]
checks:
  - {id: rusty, type: files, rule: path-exists, paths: [Cargo.toml]}
""")
    started: list[str] = []
    real = threading.Thread.start

    def start(self: threading.Thread) -> None:
        started.append(self.name)
        real(self)

    monkeypatch.setattr(threading.Thread, "start", start)
    (result,) = build_report(open_session(repo), CheckOptions(only=["rusty"])).results
    assert (result.status, result.signal) == (
        Status.SKIP, "not applicable: no trigger matched (path-exists Cargo.toml, path-exists rust-toolchain)")
    assert "check:rusty" not in started
    write(repo, "rust-toolchain", "stable\n")
    (result,) = build_report(open_session(repo), CheckOptions(only=["rusty"])).results
    assert result.status is Status.FAIL and "check:rusty" in started


def test_only_and_skip_select_by_id_or_plugin(repo: Path) -> None:
    write(repo, ".dun/plugins/p.yaml", "id: p\nchecks:\n"
          "  - {id: one, type: files, rule: path-exists, paths: [README.md]}\n"
          "  - {id: two, type: files, rule: path-exists, paths: [README.md]}\n")
    ids = [r.id for r in build_report(open_session(repo), CheckOptions(only=["p"], skip=["t*"])).results]
    assert ids == ["one"]
    ids = [r.id for r in build_report(open_session(repo), CheckOptions(skip=["p", "git"])).results]
    assert "one" not in ids and "git-status" not in ids


def test_comma_lists_are_split(repo: Path) -> None:
    write(repo, ".dun/plugins/p.yaml", "id: p\nchecks:\n"
          "  - {id: one, type: files, rule: path-exists, paths: [README.md]}\n"
          "  - {id: two, type: files, rule: path-exists, paths: [README.md]}\n"
          "  - {id: three, type: files, rule: path-exists, paths: [README.md]}\n")
    report = build_report(open_session(repo), CheckOptions(only=["one, two", "git-status"], skip=["two,"]))
    assert [r.id for r in report.results] == ["one", "git-status"]


@pytest.mark.parametrize(("only", "skip", "message"), [
    (["gitstatus"], [], "--only 'gitstatus' matches no check (did you mean 'git-status'?); `dun list` shows them"),
    (["git-status,mision-boxes"], [], "--only 'mision-boxes' matches no check (did you mean 'mission-boxes'?)"),
    ([], ["nothing*"], "--skip 'nothing*' matches no check; `dun list` shows them"),
    (["go"], [], "--only 'go': its plugin is disabled (plugins.disabled)"),
])
def test_patterns_that_match_no_check_are_usage_errors(repo: Path, only: list[str], skip: list[str],
                                                       message: str) -> None:
    write(repo, ".dun/config.yaml", "plugins:\n  disabled: [go]\n")
    write(repo, "MISSION.md", "- [ ] x\n")
    with pytest.raises(UsageError) as caught:
        build_report(open_session(repo), CheckOptions(only=only, skip=skip))
    assert message in str(caught.value)
    assert caught.value.exit_code == 2


def test_warn_is_actionable_only_when_strict(repo: Path) -> None:
    write(repo, ".dun/plugins/p.yaml", "id: p\nchecks:\n"
          "  - {id: w, type: command, command: 'exit 3', warn_codes: [3]}\n")
    report = build_report(open_session(repo), CheckOptions(only=["p"]))
    assert report.results[0].status is Status.WARN
    assert report.actionable() == []
    assert build_report(open_session(repo), CheckOptions(only=["p"], strict=True)).actionable()
