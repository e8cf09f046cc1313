"""Console-script entry point. Kept import-light: `dun --version` answers before click is imported, and `dun check`
starts `git status` before it and, on an ordinary command line, runs without click at all."""

import os
import sys

TYPE_CHECKING = False  # not typing's: importing typing costs more than all of `dun --version`

if TYPE_CHECKING:
    from collections.abc import Callable

    from dun.core.snapshot import Early
    from dun.core.spawn import Spawned
    from dun.engine.launch import Launches


def main() -> int:
    if sys.stdout is None:  # started with stdout closed (`dun check >&-`): what it prints goes nowhere, as asked
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - open for the life of the process
    if sys.argv[1:] in (["--version"], ["-V"]):
        from dun import __version__

        sys.stdout.write(f"dun, version {__version__}\n")
        return 0
    # first of all, before even the options are read: git walks the tree while the rest of dun loads
    status = _start_git() if sys.argv[1:2] in (["check"], ["iterate"]) else None
    here = _runs_checks_here(sys.argv[1:])
    if status is not None and here is None:
        status.stop()  # the options name another repository: its git starts later, there
        status = None
    early = None
    launches = None
    if here:
        import gc

        # A check run lives a tenth of a second and frees everything at exit: collecting cycles while it allocates
        # 100,000s of objects (the listing, the caches) only costs time (2 ms on a 50,000-file repository).
        gc.disable()
    if here == "check" and status is not None:
        from dun.core.fingerprint import TreeLook

        tree_look = TreeLook(status)
        if "--output" not in sys.argv and "-o" not in sys.argv:
            from dun.engine.replay import replay

            try:
                code = replay(sys.argv[1:], status, _warm, tree_look)
            except BrokenPipeError:  # the reader went away (`dun check | head`): as the error handler does
                code = 0
            if code is not None:
                return _leave(code)
        # not replayed: the test runners the last identical run ran start now, while the rest of dun loads
        from dun.engine.launch import start

        launches = start(sys.argv[1:], tree_look)
    if here:
        top, listed = _start_more() if status is not None else (None, None)
        from dun.core.snapshot import start_early

        early = start_early(status, top, listed)  # the run's checks share the status and the listing started now
        code = _without_click(here, sys.argv[2:], early, launches)
        if code is not None:
            return _leave(code)
    if launches is not None:
        launches.stop()  # click reads this command line: an unusual form, run as usual
    from dun.cli.main import main as cli_main

    return cli_main(early=early)


# What a `dun check` that is not replayed imports next, dependencies first (from `-X importtime` of such a run):
# loaded while a replay waits for `git status`, one module at a time until git has answered, so a changed tree
# does not pay for the wait and the imports one after the other. Each name is one a real run imports anyway
# (tests/test_entry.py); dun.engine.runner is left out on purpose: the replay tests tell a replay by its absence.
WARM = ("dun.engine.launch", "collections", "functools", "enum", "re", "signal", "threading", "contextlib",
        "selectors", "subprocess", "fnmatch", "urllib.parse", "pathlib", "copy", "ast", "dis", "inspect",
        "dataclasses", "typing", "dun.core.kinds", "dun.core.errors", "dun.core.git", "dun.core.globs",
        "dun.core.snapshot", "dun.cli.flags", "dun.cli.errors", "pluggy", "dun.core.cache.session",
        "dun.engine.hookspecs", "dun.core.textfiles", "dun.config.schema", "dun.engine.model", "dun.engine.checkapi",
        "dun.engine.manager", "dun.store.layout", "dun.config.loader", "dun.engine.manifest", "dun.engine.catalog",
        "dun.engine.session", "dun.output.base", "dun.cli.commands.check", "json", "dun.engine.configcache", "shlex",
        "dun.core.cache.files", "dun.engine.sanitize", "dun.engine.catalogcache", "dun.engine.inputs",
        "dun.engine.reuse")


def _warm(done: "Callable[[], bool]") -> None:
    for name in WARM:
        if done():
            return
        if name not in sys.modules:
            try:
                __import__(name)
            except Exception:  # the run imports it again itself and meets the error there
                continue


def _leave(code: int) -> int:
    """Exit at once with `code`, skipping the interpreter's teardown (3 ms of a 60 ms replayed run), when nothing
    is left to run at exit: no atexit callback (coverage.py's, a plugin's) and no other thread. Otherwise return
    `code` for the usual exit."""
    import atexit

    threading = sys.modules.get("threading")
    if getattr(atexit, "_ncallbacks", lambda: 1)() or (threading is not None and threading.active_count() > 1):
        return code
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        code = 0  # as the error handler does
    os._exit(code)


def _without_click(command: str, args: list[str], early: "Early | None", launches: "Launches | None" = None
                   ) -> int | None:
    """`dun check ARGS` or `dun iterate ARGS` read from its option table (dun/cli/flags.py) without importing
    click, which costs a fifth of a fresh check of a large repository; None when click must read ARGS (help,
    errors, unusual forms)."""
    from dun.cli.flags import parse

    values = parse(command, args)
    if values is None:
        return None
    from dun.cli.errors import guarded

    if command == "check":
        from dun.cli.commands.check import CheckOptions, run_check

        return guarded(lambda: run_check(CheckOptions(**values), early, launches))
    from dun.cli.commands.iterate import IterateOptions, run_iterate

    values.update({k: tuple(v) for k, v in values.items() if isinstance(v, list)})
    return guarded(lambda: run_iterate(IterateOptions(**values), early))


def _runs_checks_here(args: list[str]) -> str | None:
    """`check` or `iterate` when the command runs the checks of the current directory (no -C PATH, no PATH): its git
    can start before the rest of dun loads. None otherwise."""
    command = args[0] if args else ""
    if command not in ("check", "iterate"):
        return None
    from dun.cli.flags import REPO_FLAGS
    from dun.cli.flags import valued as taking_values  # the options' table: light, unlike click

    valued = taking_values(command)
    rest = iter(args[1:])
    for arg in rest:
        if arg in REPO_FLAGS:  # another repository: its git is not the current directory's
            return None
        if arg in valued:
            next(rest, None)
        elif not arg.startswith("-"):
            return None
    return command


def _start_more() -> "tuple[Spawned | None, Spawned | None]":
    """`git rev-parse --show-toplevel` started before the modules that read it load (importing dun.core.snapshot,
    subprocess and pathlib first cost it 10-20 ms). `git ls-files` is not started here: a run on an index seen before
    reads its glob matches back and lists nothing (dun/core/cache/matches.py); the run starts it when it must."""
    from dun.core.spawn import TOPLEVEL_ARGS, start_git

    try:
        return start_git(TOPLEVEL_ARGS), None
    except OSError:
        return None, None


def _start_git() -> "Spawned | None":
    from dun.core.spawn import start_git, status_args

    try:
        return start_git(status_args())
    except OSError:
        return None  # no git: the run finds out itself


def run() -> None:
    sys.exit(main())
