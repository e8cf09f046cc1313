"""`dun doctor`: whether this machine can run the loop here. The agent CLIs (installed where, which version against
the tested one, credentials present, usage priceable), git, Python and coverage, and the program of every command
check that applies. Exit 1 when the configured agent (or a configured reviewer) cannot run."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dun.agents.auth import Auth, auth_status
from dun.agents.registry import agent_adapters
from dun.agents.versions import TESTED, Pin
from dun.core.gitsafe import neutral_env
from dun.core.kinds import ExitCode
from dun.engine.runner import trigger_miss
from dun.engine.session import Session, open_session

if TYPE_CHECKING:
    from dun.config.sections import Settings

_VERSION = re.compile(r"\d+\.\d+\.\d+")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass
class AgentRow:
    name: str
    role: str  # agent | reviewer | "" (installed or not, not configured)
    command: str  # what would run
    source: str  # agent.command | gate.commands | PATH
    path: str | None = None  # resolved executable
    version: str | None = None
    tested: str | None = None
    auth: Auth | None = None
    pricing: str | None = None  # why dun cannot price it (with a budget that is a config error)
    problem: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "role": self.role or None, "command": self.command, "source": self.source,
                "path": self.path, "version": self.version, "tested_version": self.tested,
                "version_matches": None if self.version is None or self.tested is None else self.version == self.tested,
                "auth": self.auth.to_dict() if self.auth else None, "pricing_problem": self.pricing,
                "problem": self.problem}


@dataclass
class Doctor:
    root: Path
    agents: list[AgentRow] = field(default_factory=list)
    tools: dict[str, Any] = field(default_factory=dict)
    checks: list[dict[str, object]] = field(default_factory=list)
    projects: list[str] = field(default_factory=list)  # each ecosystem found and its checks, as `dun init` says
    sandbox: dict[str, Any] = field(default_factory=dict)  # mode, note, the agent's preflight problem

    @property
    def runnable(self) -> bool:
        return not any(row.problem for row in self.agents if row.role) and not self.sandbox.get("problem")


def resolve(program: str, root: Path) -> str | None:
    if os.sep in program:
        path = Path(program) if os.path.isabs(program) else root / program
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    return shutil.which(program)


def probe_version(path: str) -> tuple[str | None, str | None]:
    """(version, problem) from `PATH --version`; some CLIs print it on stderr."""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60,
                             stdin=subprocess.DEVNULL, errors="replace")
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"`{path} --version` failed: {exc}"
    text = out.stdout + out.stderr
    if out.returncode != 0:
        return None, f"`{path} --version` exited {out.returncode}: {' '.join(text.split())[:200]}"
    found = _VERSION.search(text)
    return (found[0] if found else text.strip()[:40] or None), None


def install_hint(pin: Pin) -> str:
    if pin.installer == "pip":
        return f"not found: pip install '{pin.package}=={pin.version}' (or set agent.command)"
    return f"not found: npm install -g {pin.package}@{pin.version} (or set agent.command)"


def agent_rows(session: Session, settings: Settings) -> list[AgentRow]:
    agent, gate = settings.agent, settings.gate
    reviewers = {label.partition(":")[0] for label in gate.reviewers}
    adapters = agent_adapters(session.pm)
    names = [*TESTED, *sorted(({agent.name} | reviewers) - set(TESTED))]
    rows = []
    for name in names:
        role = "agent" if name == agent.name else "reviewer" if name in reviewers else ""
        named = agent.command if role == "agent" else gate.commands.get(name) or []
        given = [named] if isinstance(named, str) else [str(a) for a in named] if isinstance(named, list | tuple) \
            else []
        source = "agent.command" if role == "agent" and given else "gate.commands" if given else "PATH"
        pin = TESTED.get(name)
        program = given[0] if given else pin.binary if pin else ""
        row = AgentRow(name, role, program, source, resolve(program, session.root) if program else None,
                       tested=pin.version if pin else None)
        if row.path is None:
            row.problem = install_hint(pin) if pin and not given else f"not found: {program or '(no command)'}"
        if pin is not None:
            row.auth = auth_status(name)
        if name in adapters and role:
            # a reviewer is priced as the table prices its CLI's default model
            config = agent if role == "agent" else replace(agent, name=name, model=None, input_usd_per_mtok=0.0,
                                                            output_usd_per_mtok=0.0)
            row.pricing = adapters[name].pricing(config)
        rows.append(row)
    probed = [row for row in rows if row.path and row.tested]  # `command` runs arbitrary programs: not probed
    with ThreadPoolExecutor(max_workers=4) as pool:
        for row, (version, problem) in zip(probed, pool.map(lambda r: probe_version(str(r.path)), probed),
                                           strict=True):
            row.version, row.problem = version, problem
    return rows


def tools(root: Path) -> dict[str, object]:
    out: dict[str, object] = {"python": {"version": sys.version.split()[0], "path": sys.executable}}
    git = shutil.which("git")
    version, problem = probe_version(git) if git else (None, "not found")
    identity = {}
    for key in ("user.name", "user.email"):
        proc = subprocess.run(["git", "config", key], cwd=root, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, env=neutral_env(str(root))) if git else None
        identity[key] = proc.stdout.strip() if proc and proc.returncode == 0 else None
    out["git"] = {"path": git, "version": version, "problem": problem, "identity": identity}
    try:
        import coverage

        out["coverage"] = {"version": coverage.__version__, "path": shutil.which("coverage")}
    except ImportError:
        out["coverage"] = {"version": None, "path": shutil.which("coverage")}
    return out


# commands that only prepare a check's files or shell (go-test's `rm -f .dun/cache/go-cover.out; go test ...`)
_PREPARING = frozenset({"rm", "mkdir", "cd", "touch", "true", ":", "export", "set", "unset"})


def first_program(command: str) -> str | None:
    """The program a shell command line starts, past `VAR=value` assignments and the commands before it that only
    prepare (`rm -f report; go test ...` runs go); None when it cannot be told."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()")
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return None
    first: str | None = None
    segment: list[str] = []
    for word in [*words, ";"]:
        if word and set(word) <= set(";&|()"):
            program = next((w for w in segment if not _ASSIGNMENT.match(w)), None)
            if program is not None and program not in _PREPARING:
                return program
            first = first or program
            segment = []
        else:
            segment.append(word)
    return first


def check_programs(session: Session) -> list[dict[str, Any]]:
    """The program each applying command check will run, resolved as the check resolves it: the project's Python for
    `{python}`, node_modules/.bin for `{js:NAME}`; checks for a tool the project does not use are left out."""
    from dun.checks import ecosystems, jsenv
    from dun.checks.pyenv import project_python

    catalog, ctx = session.catalog(), session.context()
    out = []
    for manifest in catalog.manifests:
        if trigger_miss(manifest.triggers, ctx) is not None:
            continue
        for check in manifest.checks:
            if check.type != "command":
                continue
            cwd = session.root / str(check.options.get("cwd") or ".")
            uses = check.options.get("uses")
            if uses and not ecosystems.uses(cwd, str(uses)):
                continue
            command, interpreter = str(check.options.get("command", "")), None
            if "{python}" in command:
                python = project_python(session.root, cwd)
                command = command.replace("{python}", python.shell)
                interpreter = f"{python.shown} ({python.source})"
            places = [(cwd, command)]
            if jsenv.has_js_placeholder(command):
                places = jsenv.runs(command, session.root, cwd)  # a monorepo's runner: once per package
                node = shutil.which("node")
                interpreter = f"node {node}" if node else "node NOT FOUND"
            for where, expanded in places:
                program = first_program(expanded)
                if program is None:
                    continue
                path = resolve(program, where)
                path = os.path.normpath(path) if path else path
                shown = check.id if where == cwd else f"{check.id} ({os.path.relpath(where, session.root)})"
                out.append({"check": shown, "program": program, "path": path, "found": path is not None,
                            "interpreter": interpreter})
    return out


def diagnose(path: str | None) -> Doctor:
    session = open_session(path)
    from dun.checks.unrun import init_report

    projects = [line.removeprefix("found ").rstrip("\n") for line in init_report(session.root)]
    return Doctor(session.root, agent_rows(session, session.settings), tools(session.root), check_programs(session),
                  projects, sandbox_row(session, session.settings))


def sandbox_row(session: Session, settings: Settings) -> dict[str, object]:
    """The sandbox `dun loop` would use here, and whether the configured agent can start inside it (the loop's
    own preflight)."""
    from dun.core.errors import DunError
    from dun.loop.engine import Engine, adapter_for

    try:
        engine = Engine(session, settings, adapter_for(session, settings))
        engine.preflight()
    except DunError as exc:
        return {"mode": settings.loop.sandbox, "note": None, "problem": str(exc)}
    return {"mode": engine.sandbox, "note": engine.protection.note, "problem": None}


def render(doc: Doctor) -> str:
    lines = [f"dun doctor: {doc.root}", "agents (versions tested: dun/agents/versions.py):"]
    for row in doc.agents:
        mark = "*" if row.role == "agent" else "r" if row.role == "reviewer" else " "
        version = row.version or "-"
        if row.tested:
            version += " (tested)" if row.version == row.tested else f" (tested {row.tested})"
        where = f"{row.path} [{row.source}]" if row.path else row.problem or "not found"
        auth = ""
        if row.auth is not None and row.path:
            auth = f"; auth: {', '.join(row.auth.found)}" if row.auth.configured else f"; auth: none ({row.auth.hint})"
        lines.append(f" {mark} {row.name:<9} {version:<24} {where}{auth}")
        if row.path and row.problem:
            lines.append(f"   {'':<9} {row.problem}")
        if row.pricing:
            lines.append(f"   {'':<9} {row.pricing}")
    git = doc.tools["git"]
    ident = git["identity"]
    who = f"{ident['user.name']} <{ident['user.email']}>" if all(ident.values()) else "no user.name/user.email"
    lines += ["tools:", f"   git       {git['version'] or git['problem']}; identity: {who}",
              f"   python    {doc.tools['python']['version']} ({doc.tools['python']['path']})",
              f"   coverage  {doc.tools['coverage']['version'] or 'not installed'}"]
    lines.append("projects (the built-in checks that apply, as `dun init` says):")
    lines += [f"   {line}" for line in doc.projects]
    if doc.checks:
        lines.append("checks (command programs):")
        lines += [f"   {c['check']}: {c['program']}: {c['path'] or 'NOT FOUND'}"
                  + (f" [{c['interpreter']}]" if c.get("interpreter") else "") for c in doc.checks]
    box = doc.sandbox
    lines += ["sandbox:", f"   {box.get('problem') or box.get('note') or box.get('mode')}"]
    configured = [r for r in doc.agents if r.role]
    verdict = "can run" if doc.runnable else "cannot run"
    names = ", ".join(r.name if r.role == "agent" else f"{r.name} (reviewer)" for r in configured)
    lines.append(f"result: the configured agent{'s' if len(configured) > 1 else ''} ({names}) {verdict}")
    return "\n".join(lines) + "\n"


def run_doctor(path: str | None, as_json: bool) -> int:
    doc = diagnose(path)
    if as_json:
        data = {"schema_version": 1, "root": str(doc.root), "runnable": doc.runnable,
                "agents": [row.to_dict() for row in doc.agents], "tools": doc.tools, "checks": doc.checks,
                "projects": doc.projects, "sandbox": doc.sandbox}
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        sys.stdout.write(render(doc))
    return ExitCode.OK if doc.runnable else ExitCode.WORK_REMAINS
