"""The Claude Code `PreToolUse` hook: event JSON on stdin, a deny decision (or nothing) on stdout, exit 0 always,
and one line per decision in `<repo>/.dun/logs/guard.jsonl`.

Failure policy (the guard runs unattended, so it fails closed and never shows a traceback):
- an event that is not a JSON object, or names no tool: deny (rule `input.unreadable`) and one line on stderr;
- a Bash call whose command is missing or cannot be parsed: deny (`shell.unparseable`);
- an internal error while deciding: deny (`guard.error`);
- an event other than PreToolUse: no decision (it has nothing to allow or deny);
- bad `guard.allow`/`guard.deny` patterns or an unreadable config: a line on stderr, and the built-in rules alone;
- a failure to write the log: a line on stderr; the decision stands.
"""

from __future__ import annotations

import datetime
import functools
import io
import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, BinaryIO

from dun.core.atomic import make_private_dir
from dun.core.redact import Redactor
from dun.guard.engine import Verdict, decide, deny
from dun.guard.rules import BUILTIN_RULES, RuleSet, compile_pattern, load_rules
from dun.store.store import Store

LOG_MAX_CHARS = 4000


@functools.lru_cache(maxsize=8)
def find_root(cwd: str) -> Path:
    """The git top level of `cwd`; `cwd` itself outside git (or when git is missing)."""
    here = os.path.realpath(cwd)
    try:
        proc = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=here, capture_output=True, timeout=10,
                              stdin=subprocess.DEVNULL, env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"}, check=False)
        top = proc.stdout.decode("utf-8", "surrogateescape").strip()
        if proc.returncode == 0 and top:
            return Path(os.path.realpath(top))
    except (OSError, subprocess.SubprocessError):
        pass
    return Path(here)


def project_root(event: object) -> Path:
    """The repository the agent works in, from git: the top level of CLAUDE_PROJECT_DIR (Claude Code sets it for
    hooks to the directory the session started in, which dun makes the repository), else of the event's cwd. A
    `cd` into another repository does not make that repository "inside"."""
    project = os.environ.get("CLAUDE_PROJECT_DIR")
    if project and os.path.isdir(project):
        return find_root(project)
    return find_root(_event_cwd(event))


def _event_cwd(event: object) -> str:
    cwd = event.get("cwd") if isinstance(event, dict) else None
    if isinstance(cwd, str) and os.path.isdir(cwd):
        return cwd
    try:
        return os.getcwd()
    except OSError:  # the process's own cwd was deleted
        return "/"


def _rules(allow: list[str], deny_: list[str], err: IO[str]) -> RuleSet:
    try:
        return load_rules(allow, deny_)
    except ValueError as exc:
        print(f"dun guard: ignoring bad guard patterns: {exc}", file=err)
    good = [[p for p in patterns if _valid(p)] for patterns in (allow, deny_)]
    try:
        return load_rules(good[0], good[1])
    except ValueError:
        return RuleSet(BUILTIN_RULES, (), ())


def _valid(pattern: str) -> bool:
    try:
        compile_pattern(pattern)
    except ValueError:
        return False
    return True


def run_guard(stdin: BinaryIO, stdout: IO[str], config_allow: list[str], config_deny: list[str],
              stderr: IO[str] | None = None, root: Path | None = None, redactor: Redactor | None = None) -> int:
    """Read one event, print the decision when it is a denial, log it (cleaned by `redactor`, the config's); always
    0."""
    err = stderr if stderr is not None else sys.stderr
    redactor = redactor or Redactor()
    raw = b""
    event: Any = None
    try:
        raw = stdin.read()
        event = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # UnicodeDecodeError, JSONDecodeError are ValueErrors
        problem = f"the hook event is not JSON ({type(exc).__name__})"
    else:
        problem = _problem(event)
    cwd = _event_cwd(event)
    root = root or project_root(event)
    if problem:
        print(f"dun guard: {problem}; denying", file=err)
        verdict = deny("input.unreadable", f"{problem}; the guard denies what it cannot read")
        _emit(stdout, verdict)
        _log(root, {"tool": None, "input": raw[:200].decode("utf-8", "replace")}, verdict, err, redactor)
        return 0
    if event.get("hook_event_name", "PreToolUse") != "PreToolUse":
        return 0
    try:
        verdict = decide({**event, "cwd": os.path.realpath(cwd)}, root, _rules(config_allow, config_deny, err))
    except Exception as exc:  # the guard must never crash open
        verdict = deny("guard.error", f"internal error in the guard: {type(exc).__name__}: {exc}")
    _emit(stdout, verdict)
    _log(root, _subject(event), verdict, err, redactor)
    return 0


def _problem(event: object) -> str:
    if not isinstance(event, dict):
        return f"the hook event is a JSON {type(event).__name__}, not an object"
    if event.get("hook_event_name", "PreToolUse") != "PreToolUse":
        return ""
    if not isinstance(event.get("tool_name"), str) or not event["tool_name"]:
        return "the hook event has no tool_name"
    return ""


def _emit(stdout: IO[str], verdict: Verdict) -> None:
    if verdict.decision != "deny":
        return
    out = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                  "permissionDecisionReason": verdict.reason}}
    try:
        stdout.write(json.dumps(out) + "\n")
        stdout.flush()
    except (OSError, ValueError):  # a closed pipe: nothing more can be said
        pass


def _subject(event: Mapping[str, object]) -> dict[str, object]:
    tool_input = event.get("tool_input")
    tool_input = tool_input if isinstance(tool_input, dict) else {}
    subject: dict[str, object] = {"tool": event.get("tool_name"), "session_id": event.get("session_id"),
                               "cwd": event.get("cwd")}
    if event.get("tool_name") == "Bash":
        subject["command"] = _clip(tool_input.get("command"))
    else:
        subject["path"] = _clip(tool_input.get("file_path", tool_input.get("notebook_path")))
    return subject


def _clip(value: object) -> object:
    if isinstance(value, str) and len(value) > LOG_MAX_CHARS:
        return value[:LOG_MAX_CHARS] + f"… ({len(value)} chars)"
    return value


def log_path(root: Path) -> Path:
    return Store(root).guard_log_path


def _log(root: Path, subject: Mapping[str, object], verdict: Verdict, err: IO[str], redactor: Redactor) -> None:
    stamp = datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    entry = {"time": stamp, **subject, "decision": verdict.decision, "rule": verdict.rule, "reason": verdict.reason}
    try:
        path = log_path(root)
        make_private_dir(path.parent)
        line = json.dumps(redactor.redact_data(entry), ensure_ascii=False, default=str) + "\n"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)  # the commands an agent ran: private
        with open(fd, "a", encoding="utf-8") as fh:
            fh.write(line)
    except (OSError, ValueError, TypeError) as exc:
        print(f"dun guard: could not write the log: {exc}", file=err)


def config_patterns(root: Path, err: IO[str]) -> tuple[list[str], list[str], Redactor]:
    """guard.allow and guard.deny from the repository's dun config, and its redactor (`secrets.patterns`); empty
    and the well-known formats only (with a line on stderr) when unreadable."""
    try:
        from dun.config.loader import dun_config

        config = dun_config(root)
        guard = config.settings.guard
        return list(guard.allow), list(guard.deny), config.redactor
    except Exception as exc:
        print(f"dun guard: config not read, using the built-in rules only: {exc}".splitlines()[0], file=err)
        return [], [], Redactor()


def main(stdin: BinaryIO | None = None, stdout: IO[str] | None = None, stderr: IO[str] | None = None,
         repo: str | None = None) -> int:
    """`dun guard [-C REPO]`: read the event, load guard.allow/guard.deny from the repository (REPO, else the
    event's), decide."""
    err = stderr if stderr is not None else sys.stderr
    try:
        raw = (stdin if stdin is not None else sys.stdin.buffer).read()
    except OSError as exc:
        print(f"dun guard: cannot read stdin: {exc}", file=err)
        raw = b""
    try:
        event = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        event = None
    root = find_root(repo) if repo is not None else None
    allow, deny_, redactor = config_patterns(root or project_root(event), err) if isinstance(event, dict) \
        else ([], [], Redactor())
    return run_guard(io.BytesIO(raw), stdout if stdout is not None else sys.stdout, allow, deny_, err, root,
                     redactor)
