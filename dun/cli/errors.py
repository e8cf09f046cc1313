"""The one place exceptions become exit codes, for every command: through click (dun/cli/main.py) or not (`dun
check`'s command line read without click, dun/entry.py). Imports click only to name its own exceptions, and only
once one was raised."""

from __future__ import annotations

import sys
from collections.abc import Callable

from dun import __version__
from dun.core.errors import ConfigError, DunError
from dun.core.kinds import ExitCode

INTERRUPTED = 130


def guarded(call: Callable[[], object]) -> int:
    """Run `call` and return its exit code: its int result, a SystemExit's code, or the code of what it raised,
    with one line on stderr (a traceback only ever goes to a crash log)."""
    from dun.core.reaper import install_termination_handlers

    install_termination_handlers()  # a terminated dun takes the commands it started with it
    try:
        rv = call()
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else ExitCode.USAGE
    except (KeyboardInterrupt, EOFError):  # what click turns into Abort, when click is not in the way
        _say("dun: interrupted")
        return INTERRUPTED
    except ConfigError as exc:
        for line in exc.errors:
            _say(f"dun: {line}")
        return exc.exit_code
    except DunError as exc:
        _say(f"dun: {exc}")
        return exc.exit_code
    except BrokenPipeError:
        return 0
    except Exception as exc:
        code = _click_error(exc)
        if code is not None:
            return code
        log = _crash_log(exc)
        _say(f"dun: internal error: {type(exc).__name__}: {exc} (traceback in {log})".splitlines()[0])
        return ExitCode.INTERNAL
    return rv if isinstance(rv, int) else 0


def _say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _click_error(exc: Exception) -> int | None:
    if "click" not in sys.modules:
        return None
    import click

    if isinstance(exc, click.exceptions.Abort):
        _say("dun: interrupted")
        return INTERRUPTED
    if isinstance(exc, click.ClickException):
        exc.show()
        return ExitCode.USAGE
    return None


def _crash_log(exc: BaseException) -> str:
    """Write the traceback to a log file and return its path; the user sees one line."""
    import datetime
    import traceback

    from dun.core.resources import user_state_dir

    text = "".join(traceback.format_exception(exc))
    try:
        directory = user_state_dir()
        directory.mkdir(parents=True, exist_ok=True)
        stamp = datetime.datetime.now().strftime("%Y%m%dT%H%M%S")
        path = directory / f"crash-{stamp}.log"
        path.write_text(f"dun {__version__}\nargv: {sys.argv}\n\n{text}", encoding="utf-8")
        return str(path)
    except OSError:
        import tempfile

        fd, name = tempfile.mkstemp(prefix="dun-crash-", suffix=".log")
        with open(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        return name
