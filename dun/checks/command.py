"""`command`: run a shell command with a timeout; exit codes decide pass, warn or fail; a parser turns its output or
report file into items."""

from __future__ import annotations

import os
import re
import shlex
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dun.checks.parsers.fields import PARSER_FIELDS, validate_parser
from dun.config.schema import Field
from dun.engine.checkapi import CheckContext, CheckSpec, CheckType
from dun.engine.hookspecs import hookimpl
from dun.engine.model import Item, Outcome, Status, folded_count
from dun.store.layout import CACHE

if TYPE_CHECKING:
    from dun.checks.parsers.base import Parsed
    from dun.checks.pyenv import Python

PLACEHOLDER = "{python}"  # the project's interpreter (dun/checks/pyenv.py)
# `{dun-file:PATH}`: a file dun ships under dun/checks/ (mocha's reporter), as an absolute path
DUN_FILE = re.compile(r"\{dun-file:(?P<path>[\w-]+(?:/[\w.-]+)*)\}")

FIELDS = {
    "command": Field("str", "Shell command, run with `sh -c` from the repo root; `{python}` stands for the "
                            "project's Python.", required=True),
    "cwd": Field("str", "Directory to run in, relative to the repo root.", default="."),
    "pass_codes": Field("list", "Exit codes that mean pass.", default=[0], item=Field("int", "code"), scalar_ok=True),
    "warn_codes": Field("list", "Exit codes that mean warn.", default=[], item=Field("int", "code"), scalar_ok=True),
    "tail_lines": Field("int", "Lines of output kept as the detail.", default=20, minimum=1),
    "env": Field("map", "Environment variables set for the command (values are strings).", default={}),
    "shell": Field("str", "The shell that runs the command, e.g. `bash` or `bash -eo pipefail -c`.", default="sh"),
    "requires": Field("list", "Programs that must be on PATH; without one the check is skipped.", default=[],
                      item=Field("str", "program"), scalar_ok=True),
    "parser": Field("map", "Turn the output or a report file into items.", default=None, fields=PARSER_FIELDS),
    "uses": Field("str", "Run only when the project uses this tool, as its own files tell (e.g. `vitest`, `unittest`, "
                         "`typescript`; see docs/plugins.md); otherwise skip as not applicable.", default=None),
}
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_MISSING_MODULE = re.compile(r"No module named ['\"]?(?P<module>[\w.]+)")


def validate(options: dict[str, Any]) -> list[tuple[str, str]]:
    errors: list[tuple[str, str]] = []
    for name, value in (options.get("env") or {}).items():
        if not _ENV_NAME.match(str(name)):
            errors.append(("env", f"invalid environment variable name {name!r}"))
        elif not isinstance(value, str | int | float | bool):
            errors.append(("env", f"env.{name}: expected a string, got {type(value).__name__}"))
    try:
        if not shlex.split(options["shell"]):
            errors.append(("shell", "shell must name a program"))
    except ValueError as exc:
        errors.append(("shell", f"invalid shell command line: {exc}"))
    if options.get("parser"):
        errors += validate_parser(options["parser"])
    return errors


def shell_argv(shell: str, command: str) -> list[str]:
    """`sh` runs `sh -c COMMAND`; a shell given with its own options (`bash -eo pipefail -c`) is used as written."""
    argv = shlex.split(shell)
    return [*argv, "-c", command] if len(argv) == 1 else [*argv, command]


def ensure_cache_dir(root: Path) -> None:
    """`.dun/cache/` holds the reports and profiles commands write; it ignores itself, so git never sees it."""
    cache = root / CACHE
    cache.mkdir(parents=True, exist_ok=True)
    ignore = cache / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n", encoding="utf-8")


def _environment(extra: Mapping[str, object]) -> dict[str, str] | None:
    if not extra:
        return None
    values = {k: ("true" if v is True else "false" if v is False else str(v)) for k, v in extra.items()}
    return {**os.environ, **values}


def run(spec: CheckSpec, ctx: CheckContext) -> Outcome:
    # Imported here: every dun command loads this module, few run a command check.
    from dun.checks.looked import reads
    from dun.checks.parsers.base import ParseContext, Parsed
    from dun.checks.parsers.run import ParserRun
    from dun.core.proc import Started
    from dun.engine.sanitize import safe_text, strip_ansi

    opts = spec.options
    cwd = (ctx.root / opts["cwd"]).resolve()
    decided_ns = time.time_ns()
    decided, looked = reads(lambda: _decide(opts, ctx.root, cwd))
    if isinstance(decided, Outcome):
        return decided
    command, python = decided
    scratch = CACHE in command or CACHE in str((opts["parser"] or {}).get("file"))
    if scratch:
        ensure_cache_dir(ctx.root)
    parser = ParserRun(opts["parser"], ParseContext(ctx.root, cwd)) if opts["parser"] else None
    argv = shell_argv(opts["shell"], command)
    started = None
    if ctx.launches is not None and ctx.confine is None:  # `dun check` may have started it already
        report = str(parser.file) if parser is not None and parser.file is not None else None
        added = {k: str(v) for k, v in (_environment(opts["env"]) or {}).items() if k in opts["env"]} or None
        needs = [str(ctx.root / CACHE / ".gitignore")] if scratch else []  # made just above, before the command
        started = ctx.launches.claim((spec.id, argv, str(cwd), added, report, float(spec.timeout),
                                      opts["tail_lines"], None, needs, _gates(looked, decided_ns)),
                                     after=bool(spec.after))
    if parser is not None and started is None:
        parser.before()
    on_line = (lambda line: parser.feed(strip_ansi(line))) if parser is not None else None
    if started is None:
        try:
            started = Started(ctx.confine(argv) if ctx.confine else argv, cwd, _environment(opts["env"]),
                              opts["tail_lines"])
        except OSError as exc:
            return Outcome(Status.ERROR, f"could not start {shlex.split(opts['shell'])[0]}: {exc.strerror or exc}")
    if ctx.launches is not None and ctx.confine is None:
        ctx.launches.save()  # the next identical run's plan, written while the command runs
    res = started.finish(spec.timeout, on_line)
    detail = safe_text("\n".join(res.tail))
    parsed = parser.finish() if parser is not None else Parsed()
    if parsed.problem:
        detail = f"{detail}\n(dun: {parsed.problem})".strip()
    if res.timed_out:
        first_line = command.strip().splitlines()[0] if command.strip() else ""
        return Outcome(Status.ERROR, f"timed out after {spec.timeout:g}s: {first_line}"[:200], detail, parsed.items)
    outcome = _judge(opts, res.exit_code, [safe_text(t) for t in res.tail], detail, parsed, python)
    if python is not None and outcome.next is None and spec.next and PLACEHOLDER in spec.next:
        outcome.next = spec.next.replace(PLACEHOLDER, python.shown)
    return outcome


def _decide(opts: dict[str, Any], root: Path, cwd: Path) -> tuple[str, Python | None] | Outcome:
    """The command line to run, with the project's interpreter for `{python}`; or why the check does not run (a
    program not installed, the project not using the tool, a JavaScript tool not installed). Every file, directory
    and place on PATH this looks at goes through dun/checks/looked.py, so `reads` names what decided it."""
    from dun.checks.looked import which

    missing = [p for p in opts["requires"] if which(p) is None]
    if missing:
        return Outcome(Status.SKIP, f"not installed: {', '.join(missing)}")
    if not cwd.is_dir():  # not a look the early start needs: without the directory its command cannot start
        return Outcome(Status.ERROR, f"working directory does not exist: {opts['cwd']}")
    command = opts["command"]
    if opts["uses"]:
        from dun.checks.ecosystems import uses

        if not uses(cwd, opts["uses"]):
            return Outcome(Status.SKIP, f"not applicable: the project does not use {opts['uses']}")
    if "{js" in command or "{pm}" in command:
        from dun.checks.jsenv import expand_js, js_install_hint

        command, absent = expand_js(command, root, cwd)
        if absent:
            return Outcome(Status.ERROR, absent, next=js_install_hint(cwd))
    if "{dun-file:" in command:
        command = DUN_FILE.sub(lambda m: shlex.quote(str(Path(__file__).parent / m["path"])), command)
    if "{go-tags}" in command or "{go-packages}" in command or "{go-race}" in command:  # dun/checks/gorunner.py
        from dun.checks.gorunner import go_packages, go_race, go_tags

        command = command.replace("{go-tags}", go_tags(cwd)).replace("{go-packages}", go_packages(cwd))
        command = command.replace("{go-race}", go_race(cwd))
    if "{unittest-args}" in command:  # the project's own discovery arguments (dun/checks/pyrunner.py)
        from dun.checks.pyrunner import unittest_args

        command = command.replace("{unittest-args}", unittest_args(cwd))
    if "{cargo-features}" in command:  # the features its own `make test` enables (dun/checks/rustrunner.py)
        from dun.checks.rustrunner import cargo_features

        command = command.replace("{cargo-features}", cargo_features(cwd))
    if "{pytest-args}" in command:  # the config file its own pytest command names (dun/checks/pyrunner.py)
        from dun.checks.pyrunner import pytest_args

        command = command.replace("{pytest-args}", pytest_args(cwd))
    if PLACEHOLDER not in command:
        return command, None
    from dun.checks.pyenv import project_python

    python = project_python(root, cwd)
    return command.replace(PLACEHOLDER, python.shell), python


def _gates(looked: list[str], decided_ns: int) -> list[tuple[str, object]] | None:
    """The stamps of what decided that the check runs and its command line (`_decide`), for the next run's early
    start (dun/engine/launch.py), which starts it only while they hold; None when one changed from a moment before
    the decision on (what was read may not be what the stamp shows)."""
    from dun.core.cache import CLOCK_TICK_NS, stamp

    gates: list[tuple[str, object]] = [(path, stamp(path)) for path in looked]
    since = decided_ns - CLOCK_TICK_NS
    if any(isinstance(st, tuple) and (st[1] >= since or st[2] >= since) for _, st in gates):
        return None
    return gates


def _judge(opts: dict[str, Any], code: int | None, tail: list[str], detail: str, parsed: Parsed,
           python: Python | None) -> Outcome:
    """The status from the exit code and the items; the signal from the tool's own tally and first finding."""
    items = parsed.items
    summary = f": {parsed.summary}" if parsed.summary else ""
    if code in (126, 127) and code not in opts["pass_codes"] and code not in opts["warn_codes"]:
        last = tail[-1] if tail else ""
        cause = "command not found" if code == 127 else "command not executable"
        return Outcome(Status.ERROR, f"{cause}: {last or opts['command']}"[:200], detail)
    if code in opts["pass_codes"]:
        if items and opts["parser"] and opts["parser"]["fail_on_items"]:
            return Outcome(Status.FAIL, f"{_count(items)} item(s){summary}; {_first_line(items[0])}"[:200], detail,
                           items)
        return Outcome(Status.PASS, f"exit {code}{summary}"[:200], detail)
    if python is not None and not items:  # `{python} -m tool` where the tool is missing: set-up, not a failure
        from dun.checks.pyenv import setup_hint

        module = next((m["module"] for line in reversed(tail) if (m := _MISSING_MODULE.search(line))), None)
        if module is not None:
            root_module = module.split(".")[0]
            return Outcome(Status.ERROR, f"{root_module} is not installed for {python.shown} ({python.source})",
                           detail, next=setup_hint(python, root_module))
    status = Status.WARN if code in opts["warn_codes"] else Status.FAIL
    first = _first_line(items[0]) if items else (tail[-1] if tail else "")
    signal = f"exit {code}{summary}" + (("; " if summary else ": ") + first if first else "")
    return Outcome(status, signal[:200], detail, items)


def _first_line(item: Item) -> str:
    return item.text.split("\n", 1)[0]


def _count(items: list[Item]) -> int:
    return sum(folded_count(i) or 1 for i in items)


def inputs(spec: CheckSpec, ctx: CheckContext) -> list[str] | None:
    """What a command reads cannot be known from its options: a command check is reused only when it declares
    `inputs:` (the engine adds those). Named here besides: every place on PATH a required program could appear, the
    files that choose or configure its version (dun/core/toolfiles.py: a version manager's, the toolchain's), what
    the config files of the runner it `uses` name outside the repository (dun/checks/outside.py), for a Go command
    (`{go-...}`) what its go.work and go.mod name outside the repository, for one that declares `trees:
    [node_modules]` the node_modules of its directory and of each workspace package, and for `{python}` the
    project's interpreter with its site-packages (None when that environment cannot be found without running it:
    `uv run`, `poetry run`, a `python3` from PATH)."""
    from dun.core.toolfiles import toolchain_files

    out = [os.path.join(d, program) for program in spec.options["requires"]
           for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    out += [p for program in spec.options["requires"] for p in toolchain_files(program, str(ctx.root))]
    if spec.options["uses"]:  # dun/checks/outside.py: what the runner's config files name outside the repository
        from dun.checks.outside import outside_paths

        out += outside_paths(str(ctx.root), str(ctx.root / spec.options["cwd"]), spec.options["uses"])
    if "{go-" in spec.options["command"]:  # dun/checks/gorunner.py: what go.work and replace name outside
        from dun.checks.gorunner import go_inputs

        out += go_inputs(ctx.root, ctx.root / spec.options["cwd"])
    trees = (spec.inputs or {}).get("trees")
    if isinstance(trees, list) and "node_modules" in trees:  # the workspace packages' own installs too
        from dun.checks.jsproject import workspace_dirs
        from dun.core.cache.tree import PREFIX

        cwd = ctx.root / spec.options["cwd"]
        out += [PREFIX + str(d / "node_modules") for d in [cwd, *workspace_dirs(cwd)]
                if (d / "node_modules").is_dir() and d != ctx.root]
    if PLACEHOLDER in spec.options["command"] or PLACEHOLDER in (spec.next or ""):
        found = python_inputs(ctx.root, (ctx.root / spec.options["cwd"]))
        if found is None:
            return None
        out += found
    return out


def python_inputs(root: Path, cwd: Path) -> list[str] | None:
    """The project's interpreter, its virtual environment's config, a tree look at each site-packages directory
    (dun/core/cache/tree.py: a distribution installed, upgraded or removed, a file renamed over another as `sed -i`
    and pip do, or rewritten in place, as an agent "fixing" a dependency may), the base interpreter's and the user's
    for a venv that includes them (`base_sites`), and what editable installs outside the repository hold
    (`editable_files`); None when it is not a virtual environment."""
    from dun.checks.pyenv import project_python
    from dun.core.cache.tree import PREFIX

    python = project_python(root, cwd)
    if python.source not in (".venv", "venv", "VIRTUAL_ENV"):
        return None
    interpreter = os.path.join(cwd, python.argv[0])
    venv = os.path.dirname(os.path.dirname(interpreter))
    import glob

    found = sorted(glob.glob(os.path.join(glob.escape(venv), "lib*", "python*", "site-packages"))
                   + glob.glob(os.path.join(glob.escape(venv), "Lib", "site-packages")))
    from dun.checks.pyenv import base_sites

    system = base_sites(venv)  # `include-system-site-packages = true`: the base's packages are imported too
    if system is None:
        return None
    sites: list[str] = []
    for site in [*found, *system]:  # a venv's lib64 is a link to lib: each real directory once
        if os.path.realpath(site) not in map(os.path.realpath, sites):
            sites.append(site)
    pth = [p for site in sites for p in sorted(glob.glob(os.path.join(glob.escape(site), "*.pth")))]
    finders = [p for site in sites for p in sorted(glob.glob(os.path.join(glob.escape(site), "__editable__*.py")))]
    # PYTHONPATH's directories come first on the path: edited there, they change what the tests import
    pythonpath = [os.path.join(cwd, d) for d in os.environ.get("PYTHONPATH", "").split(os.pathsep) if d]
    editable = editable_files(str(root), [*pth, *finders], pythonpath)
    if editable is None:
        return None
    return [interpreter, os.path.join(venv, "pyvenv.cfg"), *(PREFIX + site for site in sites), *pth, *finders,
            *editable]


def editable_files(root: str, named_in: list[str], given: Sequence[str] = ()) -> list[str] | None:
    """A tree look (dun/core/cache/tree.py) at each directory outside the repository that `.pth` files and editable
    finders (`__editable__*.py`) put on the path (`pip install -e ../lib`), and at those `given` (PYTHONPATH's):
    edited there, in place too, they change what the tests import. None when one holds the repository itself (its
    own runs would change it every time: the check then runs every time)."""
    import re

    from dun.core.cache.tree import PREFIX

    inside = root.rstrip(os.sep) + os.sep
    dirs: list[str] = []
    for path in named_in:
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read(1 << 20)
        except OSError:
            continue
        found = re.findall(r"['\"](/[^'\"\n]+)['\"]", text) if path.endswith(".py") else [
            line.strip() for line in text.splitlines() if line.strip() and not line.startswith(("#", "import"))]
        dirs += [d for d in found if os.path.isabs(d) and os.path.isdir(d)]
    dirs += [d for d in map(os.path.abspath, given) if os.path.isdir(d)]
    outside = [d for d in dict.fromkeys(os.path.normpath(d) for d in dirs) if not (d + os.sep).startswith(inside)]
    if any(inside.startswith(d.rstrip(os.sep) + os.sep) for d in outside):
        return None
    return [PREFIX + d for d in outside]


@hookimpl
def dun_check_types() -> list[CheckType]:
    return [CheckType("command", "Run a shell command; exit codes decide the status.", FIELDS, run, validate,
                      inputs=inputs, opaque=True)]
