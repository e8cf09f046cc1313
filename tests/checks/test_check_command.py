"""The `command` check type, driven through real manifests and real `sh -c` subprocesses."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from checks_support import check, manifest, write

from dun.engine.model import Item, Status


def _alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie (an orphaned zombie may wait for a non-reaping init)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes whose process group is `pgid`, from /proc."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


def _wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Poll `condition` until it holds or `timeout` passes (a deadline, not a fixed sleep)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return bool(condition())


def _read_pid(path: Path) -> int:
    assert _wait_until(lambda: path.is_file() and path.read_text().strip().isdigit()), f"{path} never written"
    return int(path.read_text().strip())


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="inspects processes through /proc")


# --- exit codes -------------------------------------------------------------------------------------------------


def test_exit_zero_passes_with_output_as_detail(repo):
    result = check(repo, "type: command\ncommand: echo hello; echo world")
    assert result.status is Status.PASS
    assert result.signal == "exit 0"
    assert result.detail == "hello\nworld"
    assert result.next is None


def test_nonzero_exit_fails_and_signal_names_code_and_last_line(repo):
    result = check(repo, "type: command\ncommand: echo first; echo 'it broke'; exit 3\nnext: fix it")
    assert result.status is Status.FAIL
    assert result.signal == "exit 3: it broke"
    assert result.detail.splitlines() == ["first", "it broke"]
    assert result.next == "fix it"


def test_warn_codes_warn_and_extra_pass_codes_pass(repo):
    warn = check(repo, "type: command\ncommand: exit 4\nwarn_codes: [4, 5]")
    assert warn.status is Status.WARN
    assert warn.signal.startswith("exit 4")
    passed = check(repo, "type: command\ncommand: exit 5\npass_codes: [0, 5]")
    assert passed.status is Status.PASS
    assert passed.signal == "exit 5"
    scalar = check(repo, "type: command\ncommand: exit 2\npass_codes: 2")
    assert scalar.status is Status.PASS
    not_listed = check(repo, "type: command\ncommand: exit 0\npass_codes: [2]")
    assert not_listed.status is Status.FAIL


def test_runs_in_repo_root_and_in_cwd(repo):
    write(repo, "sub/dir/marker.txt", "x\n")
    at_root = check(repo, "type: command\ncommand: pwd")
    assert Path(at_root.detail.strip()).resolve() == repo.resolve()
    in_sub = check(repo, "type: command\ncommand: cat marker.txt\ncwd: sub/dir")
    assert in_sub.status is Status.PASS
    assert in_sub.detail == "x"


def test_stderr_is_part_of_the_detail(repo):
    result = check(repo, "type: command\ncommand: echo to-stderr >&2; exit 1")
    assert result.status is Status.FAIL
    assert "to-stderr" in result.detail
    assert result.signal == "exit 1: to-stderr"


def test_detail_keeps_only_the_last_tail_lines(repo):
    result = check(repo, "type: command\ncommand: seq 1 100\ntail_lines: 3")
    assert result.detail == "98\n99\n100"
    default = check(repo, "type: command\ncommand: seq 1 100")
    assert default.detail.splitlines() == [str(n) for n in range(81, 101)]


# --- parsers ----------------------------------------------------------------------------------------------------


def test_lines_parser_makes_one_item_per_non_blank_line(repo):
    result = check(repo, """\
        type: command
        command: "printf 'first problem\\n\\n   \\nsecond problem\\n'; exit 1"
        parser: {type: lines}
        """)
    assert result.status is Status.FAIL
    assert result.items == [Item("first problem"), Item("second problem")]
    assert result.signal == "exit 1: first problem"


def test_lines_parser_with_pattern_filters_lines(repo):
    result = check(repo, """\
        type: command
        command: "printf 'noise\\nE: real one\\nmore noise\\n'; exit 1"
        parser: {type: lines, pattern: '^E:'}
        """)
    assert result.items == [Item("E: real one")]


def test_regex_parser_fills_file_line_and_text(repo):
    result = check(repo, r"""
        type: command
        command: "printf 'src/a.py:12: unused import\nall good here\nlib/b.py:7: bad name\n'; exit 1"
        parser:
          type: regex
          pattern: '^(?P<file>[^:]+):(?P<line>\d+): (?P<text>.*)$'
        """)
    assert result.status is Status.FAIL
    assert result.items == [
        Item("unused import", "src/a.py", 12),
        Item("bad name", "lib/b.py", 7),
    ]
    assert result.signal == "exit 1: unused import"


def test_regex_parser_without_text_group_uses_whole_line(repo):
    result = check(repo, r"""
        type: command
        command: "echo 'FAILED tests/test_x.py::test_y'; exit 1"
        parser: {type: regex, pattern: '^FAILED (?P<file>[^:\s]+)'}
        """)
    assert result.items == [Item("FAILED tests/test_x.py::test_y", "tests/test_x.py", None)]


def test_parser_items_are_not_reported_on_pass(repo):
    result = check(repo, "type: command\ncommand: echo warning-ish\nparser: {type: lines}")
    assert result.status is Status.PASS
    assert result.items == []


def test_max_items_keeps_first_items_and_counts_the_rest(repo):
    result = check(repo, """\
        type: command
        command: seq 1 10; exit 1
        parser: {type: lines, max_items: 3}
        """)
    assert [i.text for i in result.items] == ["1", "2", "3", "... and 7 more"]


def test_regex_parser_needs_a_pattern():
    parsed, errors = manifest("""\
        id: test
        checks:
          - id: c
            type: command
            command: "true"
            parser: {type: regex}
        """)
    assert parsed is None
    assert len(errors) == 1
    assert errors[0].startswith("test.yaml:")
    assert "checks[0].parser: parser type 'regex' needs a pattern" in errors[0]


def test_invalid_regex_is_a_validation_error():
    parsed, errors = manifest("""\
        id: test
        checks:
          - id: c
            type: command
            command: "true"
            parser: {type: regex, pattern: '(unclosed'}
        """)
    assert parsed is None
    assert "checks[0].parser: invalid regex '(unclosed'" in errors[0]


def test_missing_command_key_is_reported_with_position():
    parsed, errors = manifest("""\
        id: test
        checks:
          - id: c
            type: command
            cwd: src
        """)
    assert parsed is None
    assert errors == ["test.yaml:3:5: checks[0].command: required key is missing"]


# --- errors -----------------------------------------------------------------------------------------------------


def test_command_not_found_is_an_error_naming_it(repo):
    result = check(repo, "type: command\ncommand: dun-no-such-tool-xyz --check")
    assert result.status is Status.ERROR
    assert result.signal.startswith("command not found")
    assert "dun-no-such-tool-xyz" in result.signal


def test_command_not_executable_is_an_error(repo):
    write(repo, "script.sh", "#!/bin/sh\necho hi\n")
    result = check(repo, "type: command\ncommand: ./script.sh")
    assert result.status is Status.ERROR
    assert result.signal.startswith("command not executable")
    assert "script.sh" in result.signal


def test_missing_cwd_is_an_error_naming_it(repo):
    result = check(repo, "type: command\ncommand: 'true'\ncwd: no/such/dir")
    assert result.status is Status.ERROR
    assert "no/such/dir" in result.signal
    assert "does not exist" in result.signal


def test_cwd_that_is_a_file_is_an_error(repo):
    result = check(repo, "type: command\ncommand: 'true'\ncwd: README.md")
    assert result.status is Status.ERROR
    assert "README.md" in result.signal


# --- processes: timeouts, background children, output volume ------------------------------------------------------


@needs_proc
def test_timeout_kills_the_whole_group_including_children_ignoring_sigterm(repo):
    start = time.monotonic()
    result = check(repo, """\
        type: command
        timeout: 1
        command: |
          echo $$ > leader.pid
          sh -c 'trap "" TERM; echo $$ > child.pid; exec sleep 60' &
          while [ ! -s child.pid ]; do :; done
          echo started
          sleep 60
        """)
    elapsed = time.monotonic() - start
    assert result.status is Status.ERROR
    assert result.signal.startswith("timed out after 1s")
    assert "started" in result.detail
    assert elapsed < 15
    leader = _read_pid(repo / "leader.pid")
    child = _read_pid(repo / "child.pid")
    assert _wait_until(lambda: not _alive(child)), f"child {child} that ignored SIGTERM survived the timeout"
    assert _wait_until(lambda: not _group_members(leader)), f"group {leader} still has {_group_members(leader)}"
    with pytest.raises(ProcessLookupError):
        os.kill(leader, 0)


@needs_proc
def test_background_child_does_not_outlive_a_finished_command(repo):
    start = time.monotonic()
    result = check(repo, """\
        type: command
        command: |
          sh -c 'echo $$ > bg.pid; exec sleep 60' &
          while [ ! -s bg.pid ]; do :; done
          echo done
        """)
    assert result.status is Status.PASS
    assert "done" in result.detail
    assert time.monotonic() - start < 15
    child = _read_pid(repo / "bg.pid")
    assert _wait_until(lambda: not _alive(child)), f"background child {child} outlived the check"


@pytest.mark.skipif(shutil.which("setsid") is None, reason="needs setsid(1)")
def test_finished_command_does_not_wait_for_a_detached_process_holding_its_output(repo):
    # A test suite or script that starts a detached server (setsid, node `detached: true`, ...) keeps the
    # output pipe open. dun cannot kill it (other session), but the check must not wait for it to exit.
    start = time.monotonic()
    try:
        result = check(repo, """\
            type: command
            command: |
              setsid sh -c 'echo $$ > daemon.pid; exec sleep 6' &
              while [ ! -s daemon.pid ]; do :; done
              echo started
            """)
        elapsed = time.monotonic() - start
    finally:
        pid_file = repo / "daemon.pid"
        if pid_file.is_file():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
    assert result.status is Status.PASS
    assert "started" in result.detail
    assert elapsed < 4.5, f"check waited {elapsed:.1f}s for a detached process"


def test_huge_output_passes_with_a_bounded_detail(repo):
    # ~20 MB in 100-byte lines, then 30 MB with no newline at all.
    result = check(repo, """\
        type: command
        tail_lines: 5
        command: |
          yes 'dun huge output line, padded out to about one hundred bytes ..........................' |
            head -c 20000000
          head -c 30000000 /dev/zero | tr '\\0' x
        """)
    assert result.status is Status.PASS
    assert 0 < len(result.detail) <= 5 * 8192 + 5
    assert set(result.detail.splitlines()[-1]) == {"x"}


def test_non_utf8_output_does_not_break_the_check(repo):
    result = check(repo, """\
        type: command
        command: |
          printf 'caf\\351\\n'
          exit 1
        """)
    assert result.status is Status.FAIL
    assert result.detail.startswith("caf")


def test_killed_by_a_signal_fails(repo):
    result = check(repo, "type: command\ncommand: echo dying; kill -9 $$")
    assert result.status is Status.FAIL
    assert "dying" in result.detail


def test_timeout_signal_is_one_line_for_a_multi_line_command(repo):
    result = check(repo, """\
        type: command
        timeout: 0.5
        command: |
          echo waiting
          sleep 30
        """)
    assert result.status is Status.ERROR
    assert result.signal.startswith("timed out after 0.5s")
    assert "\n" not in result.signal


def test_exit_127_listed_in_warn_codes_warns(repo):
    result = check(repo, "type: command\ncommand: dun-no-such-tool-xyz\nwarn_codes: [127]")
    assert result.status is Status.WARN
    assert "127" in result.signal


# --- env, shell, requires, {python} -------------------------------------------------------------------------------


def test_env_sets_variables_for_the_command(repo):
    result = check(repo, """\
        type: command
        command: 'echo "$GREETING $COUNT $FLAG"; test -n "$HOME"'
        env: {GREETING: hello, COUNT: 3, FLAG: true}
        """)
    assert result.status is Status.PASS
    assert result.detail == "hello 3 true"  # and the rest of the environment is kept (HOME)


def test_shell_runs_the_command_with_another_shell_and_its_options(repo):
    if shutil.which("bash") is None:
        pytest.skip("needs bash")
    bashism = check(repo, "type: command\nshell: bash\ncommand: '[[ 1 == 1 ]] && echo ok'")
    assert bashism.status is Status.PASS and bashism.detail == "ok"
    assert check(repo, "type: command\ncommand: 'false | true'").status is Status.PASS
    strict = check(repo, "type: command\nshell: bash -eo pipefail -c\ncommand: 'false | true'")
    assert strict.status is Status.FAIL


def test_requires_skips_when_a_program_is_missing(repo):
    result = check(repo, "type: command\ncommand: 'exit 1'\nrequires: [sh, dun-no-such-tool-xyz]")
    assert result.status is Status.SKIP
    assert result.signal == "not installed: dun-no-such-tool-xyz"
    assert check(repo, "type: command\ncommand: 'exit 1'\nrequires: sh").status is Status.FAIL


@pytest.mark.parametrize(("body", "message"), [
    ("env: {1BAD: x}", "checks[0].env: invalid environment variable name '1BAD'"),
    ("env: {A: [1, 2]}", "checks[0].env: env.A: expected a string, got list"),
    ("shell: '\"unclosed'", "checks[0].shell: invalid shell command line"),
    ("parser: {type: junit-xml, pattern: x}", "'pattern' is for the lines and regex parsers, not 'junit-xml'"),
    ("parser: {type: sarif, issue_fields: {text: m}}", "'issue_fields' is for the json and json-lines parsers"),
    ("parser: {type: xml}", "must be one of 'lines', 'regex', 'json-lines', 'go-test-json', 'junit-xml'"),
])
def test_invalid_options_are_validation_errors(body, message):
    parsed, errors = manifest(f"id: test\nchecks:\n  - id: c\n    type: command\n    command: 'true'\n    {body}\n")
    assert parsed is None
    assert any(message in e for e in errors), errors


def test_python_placeholder_is_the_projects_interpreter(repo):
    venv_python = repo / ".venv" / "bin" / "python"
    write(repo, ".venv/bin/python", "#!/bin/sh\necho \"project python $*\"\n").chmod(0o755)
    result = check(repo, """\
        type: command
        command: "{python} -m tool; exit 1"
        next: "Run `{python} -m tool` again."
        """)
    assert result.detail == "project python -m tool"
    assert result.next == "Run `.venv/bin/python -m tool` again."
    assert venv_python.is_file()


def test_missing_module_under_the_project_python_is_an_error_with_a_setup_step(repo):
    write(repo, ".venv/bin/python", "#!/bin/sh\necho \"/x/.venv/bin/python: No module named pytest\"; exit 1\n"
          ).chmod(0o755)
    result = check(repo, "type: command\ncommand: '{python} -m pytest -q'")
    assert result.status is Status.ERROR
    assert result.signal == "pytest is not installed for .venv/bin/python (.venv)"
    assert result.next == "Install pytest into the project's environment: `.venv/bin/python -m pip install pytest`, " \
                          "then re-run."
    plain = check(repo, "type: command\ncommand: 'echo No module named pytest; exit 1'")
    assert plain.status is Status.FAIL  # a command that does not use {python} is judged by its exit code


# --- parsers through the command --------------------------------------------------------------------------------


def test_junit_report_file_written_by_the_command(repo):
    write(repo, "report.xml", '<testsuite><testcase classname="m" name="t1"><failure message="it broke">'
                              'm.py:3: in t1</failure></testcase><testcase name="t2"/></testsuite>')
    write(repo, ".dun/cache/r.xml", "stale, from an earlier run")
    result = check(repo, """\
        type: command
        command: test ! -e .dun/cache/r.xml && cp report.xml .dun/cache/r.xml && exit 1
        parser: {type: junit-xml, file: .dun/cache/r.xml}
        """)
    assert result.status is Status.FAIL
    assert result.items == [Item("m::t1: it broke", "m.py", 3)]
    assert result.signal == "exit 1: 1 failed, 1 passed; m::t1: it broke"
    assert (repo / ".dun/cache/.gitignore").read_text() == "*\n"
    again = check(repo, "type: command\ncommand: 'exit 1'\nparser: {type: junit-xml, file: .dun/cache/r.xml}")
    assert again.items == [] and "(dun: no report written to .dun/cache/r.xml)" in again.detail


def test_fail_on_items_turns_a_work_queue_into_a_failure(repo):
    body = """\
        type: command
        command: "echo '[{\\"id\\": \\"bd-7\\", \\"title\\": \\"Fix the parser\\"}]'"
        parser: {type: json, issue_fields: {text: [id, title]}, fail_on_items: true}
        """
    result = check(repo, body)
    assert result.status is Status.FAIL
    assert result.items == [Item("bd-7 Fix the parser")]
    assert result.signal == "1 item(s); bd-7 Fix the parser"
    empty = check(repo, body.replace("[{", "[]#{"))
    assert empty.status is Status.PASS


def test_forced_colour_output_gives_clean_items_signal_and_detail(repo):
    result = check(repo, r"""
        type: command
        command: |
          printf '\033[1msrc/a.py\033[0m:3: \033[31mbad\033[0m\n\033[32mdone\033[0m\n'; exit 1
        parser: {type: regex, pattern: '^(?P<file>[^:]+):(?P<line>\d+): (?P<text>.*)$'}
        """)
    assert result.items == [Item("bad", "src/a.py", 3)]
    assert "\x1b" not in result.detail and "\x1b" not in result.signal
    assert result.detail.splitlines() == ["src/a.py:3: bad", "done"]
