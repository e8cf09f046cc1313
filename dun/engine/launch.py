"""Test runners started as `dun check` starts, before the rest of dun has loaded: the plan the last identical run
stored names the command checks it ran, and their commands start the moment git has looked at the tree, while
Python still imports the plugins, reads the config and decides which checks apply (about a tenth of a second a
short test suite would otherwise wait for).

What makes it safe:
- A started command is only a guess until the check itself has decided its command line: the check adopts it only
  when its shell, command, directory, environment and report file are exactly what it would start now (`claim`).
  Anything else (a check found not applicable, its result reused, another runner named by the project's files) has
  the guess killed, its whole tree, before the check runs as usual; so is every guess left unclaimed at the end.
- The plan is used only when it was made by the same arguments, directory, environment, Python and dun, with the
  config, manifests, plugins and dun's own modules unchanged since (their looks, as the replay path checks); and only
  for a check whose result could not be reused: the work tree's fingerprint or one of the check's inputs moved
  since the plan was made, or its inputs cannot be known.
- A command starts only while what decided that its check applies, and its command line, still holds: the plan
  keeps their looks (its plugin's `path-exists` triggers that existed, each place on PATH its `requires:` programs
  could be, the files its `uses:` and its placeholders read: dun/checks/looked.py), and a stat of each tells. A
  check that has stopped applying (trigger removed, program gone, tool no longer used) never sees its old command
  start; nor does one whose plugin applied through a `glob-exists` trigger alone, which a stat cannot tell.
- The cache rule holds: the tree's fingerprint and the check's inputs are looked at before its command starts, and
  those looks are what its result is stored under (dun/engine/reuse.py), so a change made while it runs is seen by
  the look after it and the result is not kept.
- Never with `--no-cache` or DUN_NO_CACHE=1, in a loop's sandbox (checks confined), for a check that waits for
  another (`after:`), nor when the run has more command checks than `check.jobs` (started together they would run
  side by side where the run keeps them apart). The plan lives with dun's other caches, which hold the check
  definitions themselves (the catalog), out of the agent's reach in the sandbox.

Import-light until a command starts (os, marshal and the stamps): it runs before everything else.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # not signal: it loads enum; this one is loaded at start-up
import os
import sys
import time

from dun import __version__
from dun.core.cache import env_disabled
from dun.core.cache.file import CacheFile
from dun.core.cachedir import cache_dir_path, stable_env
from dun.core.digest import sha256
from dun.core.fingerprint import TreeLook
from dun.core.pidmark import mark

TYPE_CHECKING = False  # not typing's: this module loads before everything else
if TYPE_CHECKING:
    from dun.core.cache.tree import Walks
    from dun.core.pidmark import Mark
    from dun.core.proc import Started

FILE = "launch.marshal"
TOKEN_ENV = "DUN_PROC_TOKENS"  # dun.core.reaper's

Looks = list[tuple[str, object]]
# check id, argv, cwd, the variables the check adds to dun's environment (None: none), report file or None,
# timeout, tail lines, the inputs' looks (None: not knowable), the paths that must exist before it starts (the
# directory of dun's scratch files the check makes first), and the looks of what decided that the check applies and
# its command line (None: not known, never started early). Only what the check adds to the environment: dun's own
# is the setup's, and a secret in it is not written to a cache.
Entry = tuple[str, list[str], str, "dict[str, str] | None", "str | None", float, int, "Looks | None", list[str],
              "Looks | None"]
Plan = tuple[str, str, Looks, list[Entry]]  # the setup, the work tree's fingerprint, the looks, the entries


def _setup(argv: list[str]) -> str:
    parts = (__version__, argv, os.getcwd(), stable_env(), os.path.realpath(sys.executable))
    return sha256(repr(parts).encode("utf-8", "surrogateescape")).hexdigest()


def _file(root: str) -> CacheFile:
    return CacheFile(os.path.join(cache_dir_path(root), FILE), "launch", code=())


class Launched:
    """A planned command started as dun started, waiting for its check to claim it: until then, only its process
    id and output pipe (the `Started` that reads it is made when it is claimed, once threads may run)."""

    def __init__(self, entry: Entry, pid: int, output_fd: int, token: str, started: float,
                 since: Mark | None, failed_fd: int) -> None:
        self.entry = entry
        self.since = since  # taken before it started (dun/core/pidmark.py)
        self.pid = pid
        self.output_fd = output_fd
        self.token = token
        self.started = started  # time.monotonic()
        self.environ = dict(os.environ)  # what it inherited
        self._failed_fd: int | None = failed_fd  # closed on exec; the child writes to it when exec failed
        self._failed = False

    def exec_failed(self) -> bool:
        """Whether the child could not exec its program (then reaped, its output closed). Asked when its check
        claims it, not as it starts: dun goes on loading while the child execs (0.7 ms at the median on this
        machine, tens of ms under load, that dun used to wait)."""
        if self._failed_fd is not None:
            try:
                self._failed = bool(os.read(self._failed_fd, 64))
            finally:
                os.close(self._failed_fd)
                self._failed_fd = None
            if self._failed:
                os.waitpid(self.pid, 0)
                os.close(self.output_fd)
        return self._failed

    def adopt(self) -> Started:
        from dun.core.proc import Started

        return Started.adopt(self.pid, self.output_fd, self.token, self.started, self.entry[6], self.since)


class Launches:
    """The commands started as dun started (none when there was no plan), and what this run ran, the plan for the
    next one."""

    def __init__(self, root: str, argv: list[str], tree: tuple[str, int] | None = None) -> None:
        import _thread  # not threading: Launches are made before it loads

        self.root = root
        self.argv = argv  # dun's arguments: the plan is for the next run with the same ones
        self.jobs = 1  # at most this many commands planned (`check.jobs`)
        self.tree = tree  # (fingerprint, when its hashing began) of the status git printed as dun started
        self.basis: dict[str, object] | None = None  # the config's and catalog's looks (`Session.report`)
        self.triggers: dict[str, list[dict[str, str]]] = {}  # check id -> its plugin's triggers (`Session.report`)
        self.tree_made: str | None = None  # the fingerprint this run's results are stored under
        self._started: dict[str, Launched] = {}
        self._pre: dict[str, Looks | None] = {}  # check id -> its inputs as looked at before its command started
        self._made: dict[str, Entry] = {}
        self._looked: dict[str, Looks | None] = {}
        self._lock = _thread.allocate_lock()
        self._saving = _thread.allocate_lock()
        self._live: list[int] = []  # process groups a termination signal kills until they are claimed or stopped
        self.stored: object = None  # the plan as the file holds it (read as dun started, or written since)
        self.verified: dict[str, object] | None = None  # its looks, found unchanged as dun started

    @property
    def started(self) -> list[str]:
        with self._lock:
            return list(self._started)

    def claim(self, entry: Entry, after: bool) -> Started | None:
        """The command started for check `entry[0]` when it is exactly `entry` (argv, directory, environment,
        report file); else None, a guess of another command killed first. `entry` is recorded for the next run's
        plan unless the check waits for another (`after`)."""
        if not after:
            entry = (*entry[:9], self._gates(entry[0], entry[9]))
        with self._lock:
            if not after:
                self._made[entry[0]] = entry
            launched = self._started.pop(entry[0], None)
        if launched is None:
            return None
        if launched.exec_failed():  # the check starts it and says why it cannot
            self._live.remove(launched.pid)
            return None
        started = launched.adopt()  # the reaper's from now on: a signal kills it from there
        self._live.remove(launched.pid)
        if launched.entry[1:5] == entry[1:5] and launched.entry[6] == entry[6] and launched.environ == os.environ:
            return started
        started.stop()
        return None

    def _gates(self, check_id: str, decided: Looks | None) -> Looks | None:
        """`decided` (the looks of what decided the command line and that the check runs: its `requires:`
        programs, its `uses:`, its placeholders' files) with its plugin's triggers that exist now, each still there
        as the next run starts it; None when unknown: the plugin applies through a `glob-exists` trigger alone (which
        a stat cannot tell), or its triggers are not known."""
        triggers = self.triggers.get(check_id)
        if decided is None or triggers is None:
            return None
        paths = [os.path.join(self.root, t["path-exists"]) for t in triggers if "path-exists" in t]
        existing: Looks = [(path, True) for path in paths if os.path.exists(path)]
        if triggers and not existing:
            return None
        return existing + decided

    def inputs(self, check_id: str, looks: Looks | None) -> Looks | None:
        """The inputs to store check `check_id`'s result under, given `looks` taken now: for a check whose command
        was started as dun started, the looks taken before it started (None when this run names other inputs:
        what they were before the command started is not known)."""
        with self._lock:
            self._looked[check_id] = looks
            if check_id not in self._pre:
                return looks
            pre = self._pre[check_id]
        if looks is None or pre is None or [p for p, _ in pre] != [p for p, _ in looks]:
            return None
        return pre

    def stop(self) -> None:
        """Kill every started command no check claimed."""
        with self._lock:
            left, self._started = list(self._started.values()), {}
        for launched in left:
            if launched.exec_failed():
                self._live.remove(launched.pid)
                continue
            started = launched.adopt()
            self._live.remove(launched.pid)
            started.stop()

    def save(self) -> None:
        """Store what this run runs as the next identical run's plan: each command check's command line and
        inputs, under the config's and catalog's looks and the source of every loaded module of dun or a plugin.
        Called as each command starts: written while it runs, not after."""
        if self.basis is None or self.tree_made is None:
            return
        from dun.engine.replay import module_looks

        # the plan's looks were found unchanged as dun started, before any module loaded: a module changed since
        # keeps its old look here, and the next run, seeing it differ, starts nothing early
        looks = {**self.basis, **module_looks(self.verified)}
        with self._saving:  # one writer at a time, each with every command started so far
            with self._lock:
                entries = [(*e[:7], self._looked.get(e[0]), *e[8:]) for e in self._made.values()]
            if len(entries) > self.jobs:
                # more commands than `check.jobs` runs at once: started together they would run side by side where
                # the run keeps some apart (`jobs: 1` for suites sharing a database): none starts early
                entries = []
            # one whose applicability cannot be told by its looks is not planned: it may have stopped applying
            entries = [e for e in entries if e[9] is not None]
            try:
                setup = _setup(self.argv)
            except OSError:  # the working directory was removed: no next identical run to plan for
                return
            plan = (setup, self.tree_made, sorted(looks.items()), entries)
            if plan == self.stored:
                return  # the file holds it already (a check without `inputs:` runs again on an unchanged tree)
            if _file(self.root).store(plan):
                self.stored = plan


def start(argv: list[str], tree_look: TreeLook) -> Launches | None:
    """Start the commands of the plan stored by the last identical `dun check` (module doc); None without a plan
    or when anything it depends on moved."""
    if env_disabled() or "--no-cache" in argv or not hasattr(os, "fork") or not hasattr(_signal, "pthread_sigmask"):
        return None  # without fork (Windows) the check starts its command itself, as before
    from dun.engine.replay import guess_root

    root = guess_root()
    if root is None:
        return None
    stored = _file(root).load(_accept)
    if stored is None:
        return None
    setup, tree, looks, entries = stored
    if setup != _setup(argv):
        return None
    from dun.core.cache.tree import Walks

    # every tree's walk begun at once and taken once (each JavaScript check's inputs name node_modules), while no
    # command of this run has started yet: all of them are looked at as of this moment
    walks = Walks()
    walks.begin([*looks, *(pair for entry in entries for pair in [*(entry[9] or ()), *(entry[7] or ())])])
    try:
        return _start_plan(root, argv, tree_look, walks, (setup, tree, looks, entries))
    finally:
        walks.close()


def _start_plan(root: str, argv: list[str], tree_look: TreeLook, walks: Walks, stored: Plan) -> Launches | None:
    setup, tree, looks, entries = stored
    look = walks.look
    if any(look(path, was) != was for path, was in looks):
        return None
    now = tree_look.of(root)
    if now is None:
        return None
    launches = Launches(root, argv, now)
    launches.stored = (setup, tree, looks, entries)
    launches.verified = dict(looks)
    if "threading" in sys.modules:
        import threading

        if threading.active_count() > 1:
            return launches  # a directory change below would be seen by another thread
    todo = []
    for entry in entries:
        if any(look(path, was) != was for path, was in entry[9] or ()):
            continue  # what decided that it applies, or its command line, moved: the check decides first
        inputs = entry[7]
        pre = [(path, look(path, was)) for path, was in inputs] if inputs is not None else None
        if pre is None or pre != inputs or now[0] != tree:  # else unchanged since its result was stored: reused
            todo.append((entry, pre))
    if not todo:
        return launches
    _guard(launches._live)
    for entry, pre in todo:
        # held back from the moment the command starts until the guard knows its process group
        _signal.pthread_sigmask(_signal.SIG_BLOCK, _STOPPING)
        try:
            launched = _start(entry)
            if launched is not None:
                launches._live.append(launched.pid)
                launches._started[entry[0]] = launched
                launches._pre[entry[0]] = pre
        finally:
            _signal.pthread_sigmask(_signal.SIG_UNBLOCK, _STOPPING)
    return launches


def _start(entry: Entry) -> Launched | None:
    """`entry`'s command started as its check starts it (dun/core/proc.py): its own session and process group, stdin
    from /dev/null, output and errors to one pipe, its processes' environment tagged for the reaper; by fork and
    exec, without the subprocess and threading modules (a fifth of dun's start-up). None when it cannot."""
    _, argv, cwd, env, report, _, _, _, needs, _ = entry
    if not all(os.path.lexists(path) for path in needs):
        return None  # removed since (`git clean -X`): the check makes it again before its command runs
    if report is not None:
        if not os.path.isdir(os.path.dirname(report)):
            return None
        if not _remove_reports(report):
            return None
    token = os.urandom(12).hex()  # as dun.core.reaper.new_token
    environ = {**os.environ, **(env or {})}
    had = environ.get(TOKEN_ENV)
    environ[TOKEN_ENV] = f"{had}:{token}" if had else token  # as dun.core.reaper.tagged_env
    read, write = os.pipe()
    try:
        import fcntl

        # room for a megabyte of output before dun reads it (a tenth of a second later): the runner never waits
        fcntl.fcntl(write, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except OSError:
        pass
    # where the program may be, in the order of the command's PATH, as subprocess tries them: looked up here, since
    # the child must not run Python that could import anything (os.execvpe imports warnings)
    program = argv[0]
    if os.sep in program:
        programs = [program]
    else:
        programs = [os.path.join(d, program) for d in environ.get("PATH", os.defpath).split(os.pathsep)]
    failed_r, failed_w = os.pipe()  # closed on exec; the child writes to it only when exec failed
    since = mark()
    started = time.monotonic()
    try:
        pid = os.fork()  # one thread runs (checked): the child makes a few system calls and execs
    except OSError:
        for fd in (read, write, failed_r, failed_w):
            os.close(fd)
        return None
    if pid == 0:
        _child(programs, argv, cwd, environ, write, failed_w)
    os.close(write)
    os.close(failed_w)
    return Launched(entry, pid, read, token, started, since, failed_r)  # whether it exec'd: asked at its claim


def _remove_reports(report: str) -> bool:
    """What the check removes before its command starts (ParserRun.before), so only this run's reports are read: the
    report and the per-package ones a workspace root's runner writes beside it (`NAME@PACKAGE.EXT`), which the parser
    merges when the report itself is missing (a stale one of a removed package was read as this run's). False when
    one cannot be removed."""
    directory, name = os.path.split(report)
    stem, suffix = os.path.splitext(name)
    try:
        names = os.listdir(directory)
    except OSError:
        return False
    for other in names:
        if other == name or (other.startswith(f"{stem}@") and other.endswith(suffix)
                             and len(other) > len(stem) + len(suffix) + 1):
            try:
                os.unlink(os.path.join(directory, other))
            except FileNotFoundError:
                pass
            except OSError:
                return False
    return True


def _child(programs: list[str], argv: list[str], cwd: str, environ: dict[str, str], output: int,
           failed: int) -> None:
    """In the forked child: what subprocess.Popen(start_new_session=True, stdin=DEVNULL, stdout=PIPE,
    stderr=STDOUT, cwd=cwd) does, then exec; never returns."""
    try:
        os.setsid()
        os.chdir(cwd)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(output, 1)
        os.dup2(output, 2)
        # as subprocess does (restore_signals): SIGPIPE and SIGXFSZ back to their default, which Python ignores;
        # the guard's handlers too (exec would reset them), not a signal dun was started ignoring (nohup): that
        # stays ignored, as subprocess leaves it; then nothing blocked
        for sig in (*_RESTORED, *(s for s in _STOPPING if _signal.getsignal(s) != _signal.SIG_IGN)):
            _signal.signal(sig, _signal.SIG_DFL)
        _signal.pthread_sigmask(_signal.SIG_SETMASK, ())
        for program in programs:
            try:
                os.execve(program, argv, environ)
            except OSError:
                continue
        raise FileNotFoundError(argv[0])  # as the check would find: it cannot start
    except BaseException:  # whatever it was, the child must not run on as a copy of dun
        try:  # noqa: SIM105 (contextlib is not loaded yet)
            os.write(failed, b"x")
        except OSError:
            pass
    finally:
        os._exit(127)


_RESTORED = tuple(getattr(_signal, name) for name in ("SIGPIPE", "SIGXFZ", "SIGXFSZ") if hasattr(_signal, name))
_STOPPING = tuple(getattr(_signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(_signal, name))


def _guard(live: list[int]) -> None:
    """Until the reaper takes them over (`proc.Started.adopt`), SIGINT, SIGTERM and SIGHUP kill the process groups
    in `live` first, then do what they did before: in a session of their own, the commands would outlive dun."""
    for sig in _STOPPING:
        previous = _signal.getsignal(sig)
        if previous == _signal.SIG_IGN:
            continue  # started ignoring it (nohup, a script's background job): dun and its commands go on

        def handler(signum: int, frame: object, previous: object = previous) -> None:
            for pid in list(live):
                try:  # noqa: SIM105 (contextlib is not loaded yet)
                    os.killpg(pid, 9)  # SIGKILL
                except OSError:
                    pass
            if callable(previous):
                previous(signum, frame)
                return
            _signal.signal(signum, _signal.SIG_DFL)
            os.kill(os.getpid(), signum)

        _signal.signal(sig, handler)


def _accept(payload: tuple[object, ...]) -> Plan:
    setup, tree, looks, entries = payload
    if not (isinstance(setup, str) and isinstance(tree, str) and isinstance(looks, list)
            and isinstance(entries, list)):
        raise TypeError("another shape")
    for path, _ in looks:
        if not isinstance(path, str):
            raise TypeError("another shape")
    out: list[Entry] = []
    for check_id, argv, cwd, env, report, timeout, tail_lines, inputs, needs, gates in entries:
        if not (isinstance(check_id, str) and isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)
                and isinstance(cwd, str) and os.path.isabs(cwd) and (env is None or isinstance(env, dict))
                and (report is None or isinstance(report, str)) and isinstance(timeout, int | float)
                and isinstance(tail_lines, int) and (inputs is None or isinstance(inputs, list))
                and isinstance(needs, list) and all(isinstance(n, str) for n in needs)
                and isinstance(gates, list)):
            raise TypeError("another shape")
        # every part start() reads, down to the inputs' pairs and the variables (a wrong one there was a traceback)
        if env is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
            raise TypeError("another shape")
        for path, _ in [*(inputs or ()), *gates]:
            if not isinstance(path, str):
                raise TypeError("another shape")
        out.append((check_id, argv, cwd, env, report, float(timeout), tail_lines, inputs, needs, gates))
    return setup, tree, looks, out
