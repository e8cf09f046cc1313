"""Start a program with its output going to pipes at the lowest cost, and collect it.

`dun check` starts `git status` before anything else loads, so git walks the tree while Python imports the rest:
`posix_spawn` needs neither the `subprocess` module nor a fork of the interpreter. Where it is missing (Windows),
`subprocess.Popen` does the same job.
"""

import os
import time

TYPE_CHECKING = False  # not typing's: importing typing costs more than all of `dun --version`

if TYPE_CHECKING:
    import subprocess

# `--untracked-files=all` lists every untracked file (not `dir/`): the untracked half of the shared file listing.
STATUS_ARGS = ("status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all")
# In a Python project git also names, in the same walk, each ignored file and each ignored directory (as `dir/`, not
# walked): the ignored sources a test runner imports on its own are part of the work tree's fingerprint (`status_args`)
IGNORED_ARG = "--ignored=matching"
PYTHON_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg")  # the python plugin's triggers
TOPLEVEL_ARGS = ("rev-parse", "--show-toplevel")
LISTING_ARGS = ("ls-files", "-z", "--cached")  # the index: git walks no directory for it

# git never prompts, speaks C, and takes no optional lock (dun's looks must not block the agent's own git)
GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"}


class Spawned:
    """A program started now with stdin from /dev/null; `collect()` waits for it and returns (code, out, err).

    Its output goes to anonymous in-memory files (`memfd_create`, Linux) rather than pipes: the program never waits
    for a reader, so `git ls-files` of 50,000 paths finishes while Python imports, and collecting it is one read
    instead of a pipe drained 64 KiB at a time by a thread that must win the GIL for each. Elsewhere, pipes.
    """

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.argv = argv
        self.started_ns = time.time_ns()  # what git reports was seen at or after this
        self._result: tuple[int, bytes, bytes] | None = None
        self._popen: subprocess.Popen[bytes] | None = None
        self._status: int | None = None  # the wait status, once `done` has reaped the program
        if not hasattr(os, "posix_spawnp"):
            from subprocess import DEVNULL, PIPE, Popen

            self._popen = Popen(argv, env=env, stdin=DEVNULL, stdout=PIPE, stderr=PIPE)
            return
        self._in_memory = hasattr(os, "memfd_create")
        if self._in_memory:  # the program writes these files, this process reads the same ones
            out_w = os.memfd_create("dun-out", os.MFD_CLOEXEC)
            err_w = os.memfd_create("dun-err", os.MFD_CLOEXEC)
            self._read = (out_w, err_w)
        else:
            out_r, out_w = os.pipe()
            err_r, err_w = os.pipe()
            self._read = (out_r, err_r)
        actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0), (os.POSIX_SPAWN_DUP2, out_w, 1),
                   (os.POSIX_SPAWN_DUP2, err_w, 2)]
        try:
            self.pid = os.posix_spawnp(argv[0], argv, env, file_actions=actions)
        except OSError:
            for fd in self._read:
                os.close(fd)
            raise
        finally:
            if not self._in_memory:  # the pipes' ends the program writes
                os.close(out_w)
                os.close(err_w)

    def done(self) -> bool:
        """Whether the program has exited (then `collect` does not wait). Without in-memory output files it cannot
        be told without reading the pipes: True, so a caller does not start more work while waiting."""
        if self._result is not None or self._status is not None:
            return True
        if self._popen is not None or not self._in_memory:
            return True
        pid, status = os.waitpid(self.pid, os.WNOHANG)
        if pid == 0:
            return False
        self._status = status
        return True

    def __del__(self) -> None:
        # A look nobody read (a listing started in case a check needed it): its output files closed and its program
        # reaped, stopped first if still running: a process that runs many commands in turn (the test suite ran 122
        # zombies) gathered a zombie and two descriptors per `dun iterate`.
        if self._popen is None:
            self.stop()

    def stop(self) -> None:
        """Stop the program if it still runs, reap it and close its output files: a look nobody will read (`collect`
        then answers as for a program killed by SIGKILL)."""
        if self._result is not None or (not hasattr(self, "pid") and self._popen is None):
            return
        self._result = (-9, b"", b"")
        if self._popen is not None:
            self._popen.kill()
            self._popen.communicate()
            return
        for fd in getattr(self, "_read", ()):
            try:  # noqa: SIM105 (contextlib is not imported before git starts)
                os.close(fd)
            except (OSError, AttributeError, TypeError):
                pass
        if self._status is None:
            try:
                if os.waitpid(self.pid, os.WNOHANG)[0] == 0:
                    os.kill(self.pid, 9)  # SIGKILL, without importing signal at start-up
                    os.waitpid(self.pid, 0)
            except (OSError, AttributeError, TypeError):  # reaped elsewhere; or `os` already torn down at exit
                pass

    def collect(self) -> tuple[int, bytes, bytes]:
        """Wait for the program; its exit code and output (the same answer when asked again)."""
        if self._result is None:
            self._result = self._collect()
        return self._result

    def _collect(self) -> tuple[int, bytes, bytes]:
        if self._popen is not None:
            out, err = self._popen.communicate()
            return self._popen.returncode, out, err
        if self._in_memory:
            status = self._status if self._status is not None else os.waitpid(self.pid, 0)[1]
            out, err = (_read_all(fd) for fd in self._read)
            return os.waitstatus_to_exitcode(status), out, err
        import select  # only here: the in-memory files need no poll

        received = {fd: bytearray() for fd in self._read}
        poller = select.poll()
        open_fds = set(self._read)
        for fd in open_fds:
            poller.register(fd, select.POLLIN)
        while open_fds:
            for fd, _ in poller.poll():
                chunk = os.read(fd, 1 << 16)
                if chunk:
                    received[fd] += chunk
                else:
                    poller.unregister(fd)
                    os.close(fd)
                    open_fds.discard(fd)
        _, status = os.waitpid(self.pid, 0)
        return os.waitstatus_to_exitcode(status), bytes(received[self._read[0]]), bytes(received[self._read[1]])


def _read_all(fd: int) -> bytes:
    """Everything written to the in-memory file `fd`, which is then closed."""
    try:
        size = os.fstat(fd).st_size
        chunks = []
        offset = 0
        while offset < size:
            chunk = os.pread(fd, size - offset, offset)
            if not chunk:
                break
            chunks.append(chunk)
            offset += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def status_args(cwd: str | None = None) -> tuple[str, ...]:
    """STATUS_ARGS for the work tree holding `cwd` (default: the current directory), with IGNORED_ARG when its root
    holds a Python project's marker (or git is pointed elsewhere by GIT_DIR or GIT_WORK_TREE). Not elsewhere: a C
    project's in-tree objects (`*.o`) would be listed one by one, and 50,000 of them cost 12 ms to parse on every run.
    Found by stats alone (the work tree's root is the nearest directory holding `.git`), so every look of a run, the
    one started before dun loads included, asks the same from any directory of the work tree."""
    if os.environ.get("GIT_DIR") or os.environ.get("GIT_WORK_TREE"):
        return (*STATUS_ARGS, IGNORED_ARG)
    here = os.path.abspath(cwd or os.getcwd())
    while not os.path.lexists(os.path.join(here, ".git")):
        parent = os.path.dirname(here)
        if parent == here:
            return STATUS_ARGS
        here = parent
    python = any(os.path.lexists(os.path.join(here, marker)) for marker in PYTHON_MARKERS)
    return (*STATUS_ARGS, IGNORED_ARG) if python else STATUS_ARGS


def start_git(args: tuple[str, ...], cwd: str | None = None) -> Spawned:
    """`git [-C cwd] ARGS` started now; raises OSError when git cannot be started."""
    from dun.core.gitsafe import neutral_env

    return Spawned(["git", *(["-C", cwd] if cwd else []), *args], neutral_env(cwd, {**os.environ, **GIT_ENV}))
