"""`dun watch`: every loop of this machine, live, in the terminal; `dun logs -f`: one loop's progress and its
agent's output as they happen.

Both read files the loops write (`.dun/live.json`, `.dun/state.json`, the agent's `.out`), polled four times a
second; the screen is redrawn only when what it shows changed (at most once a second for the clocks).
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from dun.agents.stream import readable
from dun.core.kinds import ExitCode
from dun.core.timefmt import clock
from dun.fleet.live import LocalLoops, LoopSnapshot, LoopSource
from dun.store.layout import dun_dir, find_repo
from dun.store.lock import lock_holder
from dun.store.records import LiveRecord
from dun.store.store import Store

POLL_S = 0.25


def _start(path: str | None) -> Path | None:
    """The repository whose work trees the watch shows besides the registered loops (None: outside any)."""
    repo = find_repo(path)  # a -C that is not a directory is an error; outside any repository, only the machine's
    return repo.root if path is not None or repo.is_git or dun_dir(repo.root).is_dir() else None


@contextlib.contextmanager
def _keys() -> Iterator[int | None]:
    """stdin in cbreak mode (keys arrive one by one, Ctrl-C still interrupts), restored at the end whatever
    happens; yields its descriptor, or None when stdin is not a terminal."""
    fd = sys.stdin.fileno() if sys.stdin is not None and sys.stdin.isatty() else None
    if fd is None:
        yield None
        return
    import termios
    import tty

    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        yield fd
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def _pressed(fd: int | None, timeout: float) -> str:
    """A key pressed within `timeout` seconds, or ""."""
    if fd is None:
        time.sleep(timeout)
        return ""
    ready, _, _ = select.select([fd], [], [], timeout)
    return os.read(fd, 32).decode("utf-8", "replace") if ready else ""


def _signature(snaps: list[LoopSnapshot], now: float, size: object) -> tuple[object, ...]:
    """What the screen shows: the snapshots, the second (the clocks count) and the terminal's size."""
    return (tuple(snaps), int(now), size)


def _source(path: str | None, store_url: str | None) -> LoopSource:
    """This machine's loops: the repository's work trees and the loops of the fleet store's registry running on
    this host (the store `--store` names, else $DUN_FLEET_STORE, else the repository's `fleet.store`); with a store
    other than this machine's file, the other machines' loops in it too."""
    from dun.config.loader import defaults_only, dun_config
    from dun.fleet.connect import open_store
    from dun.fleet.identity import host
    from dun.fleet.remote import FleetLoops, together
    from dun.fleet.store import LOCAL

    start = _start(path)
    fleet = (dun_config(start) if start is not None else defaults_only()).settings.fleet
    store = open_store(fleet.store, explicit=store_url)
    local = LocalLoops(start, store)
    if store.where == LOCAL:
        return local  # this machine's file holds this machine's loops only
    return together(local, FleetLoops(store, fleet.stale_after_s, host()))


def run_watch(path: str | None, once: bool, source: LoopSource | None = None, store_url: str | None = None) -> int:
    from rich.console import Console

    from dun.fleet.view import screen

    source = source or _source(path, store_url)
    console = Console()
    if once or not console.is_terminal:
        console.print(screen(source(), time.time(), 10_000, interactive=False))
        return ExitCode.OK
    from rich.live import Live

    try:
        with _keys() as fd, Live(console=console, screen=True, auto_refresh=False) as live:
            shown: tuple[object, ...] | None = None
            while True:
                now, size = time.time(), console.size
                snaps = source()
                signature = _signature(snaps, now, size)
                if signature != shown:
                    live.update(screen(snaps, now, size.height), refresh=True)
                    shown = signature
                if _pressed(fd, POLL_S).lower().startswith("q"):
                    break
    except KeyboardInterrupt:
        pass  # Ctrl-C quits the view like q: the terminal is restored on the way out
    return ExitCode.OK


# -- dun logs -f ----------------------------------------------------------------------------------------------
class _Follower:
    """Prints what changed in one loop since the last look: the iteration starting, the agent's new output lines,
    the decisions, a wait, the stop."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.out_file: str | None = None
        self.offset = 0
        self.rest = b""
        self.decided: set[float] = set()
        self.phase: str | None = None
        self.run_id: str | None = None
        self.started = 0  # the last iteration whose start was said

    def say(self, line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    def look(self) -> LiveRecord | None:
        live = self.store.read_live()
        if live is None:
            return None
        if live["run_id"] != self.run_id:
            self.run_id = live["run_id"]
            self.decided = {d["at"] for d in live["decisions"]}  # what happened before we looked is not news
            self.started = live["iteration"]
            self.say(f"run {live['run_id']} ({live['agent']}): iteration {live['iteration']}, "
                     f"${live['cost_usd']:.4f} spent")
        self._output()  # the end of the previous iteration's output first
        if live["in_progress"] and live["out_file"] != self.out_file:
            self.out_file, self.offset, self.rest = live["out_file"], 0, b""
            boxes = f", boxes {live['boxes_done']}/{live['boxes_total']}" if live["boxes_total"] is not None else ""
            self.say(f"iteration {live['in_progress']}: the agent started{boxes}")
            self.started = live["in_progress"]
        self._output()
        for d in live["decisions"]:
            if d["at"] not in self.decided:
                self.decided.add(d["at"])
                if d["iteration"] is not None and d["iteration"] > self.started:
                    self._caught_up(d["iteration"])
                which = f"iteration {d['iteration']}: " if d["iteration"] is not None else ""
                self.say(f"{which}{d['action']} ({d['reason']})")
        if live["phase"] != self.phase:
            self.phase = live["phase"]
            if live["phase"] == "waiting" and live["wait_until"]:
                self.say(f"waiting ({live['wait_reason']}) for {clock(live['wait_until'] - time.time())}, until "
                         f"{time.strftime('%H:%M:%S', time.localtime(live['wait_until']))}")
        return live

    def _caught_up(self, n: int) -> None:
        """An iteration that started and ended between two looks (a fast agent): its start and its output, read
        from its files, before its decision."""
        self.out_file, self.offset, self.rest = self.store.iteration_file(n, ".out").name, 0, b""
        self.say(f"iteration {n}: the agent started")
        self.started = n
        self._output()

    def _output(self) -> None:
        if self.out_file is None:
            return
        path = self.store.logs_dir / self.out_file
        try:
            with path.open("rb") as fh:
                size = fh.seek(0, 2)
                if size < self.offset:  # the file restarted past loop.max_output_mb: read it from its start
                    self.offset, self.rest = 0, b""
                fh.seek(self.offset)
                data = fh.read(1 << 20)
        except OSError:
            return
        self.offset += len(data)
        data = self.rest + data
        cut = data.rfind(b"\n")
        self.rest = data[cut + 1:]
        for line in readable(data[:cut + 1]) if cut >= 0 else []:
            self.say(f"  | {line}")


def run_follow(path: str | None) -> int:
    """`dun logs -f`: until the loop followed stops (Ctrl-C ends it sooner); waits for a loop to start."""
    store = Store(find_repo(path).root)
    follower = _Follower(store)
    waiting_said = False
    seen_running = False
    try:
        while True:
            running = bool(lock_holder(store))
            live = follower.look()
            seen_running = seen_running or running
            if not running and not seen_running and not waiting_said:
                follower.say("no loop is running here; waiting for one (Ctrl-C to quit)")
                waiting_said = True
            if seen_running and not running:
                follower.look()  # the last words
                stop = live["stop_reason"] if live is not None else None
                follower.say(f"the loop stopped: {stop}" if stop else "the loop is no longer running")
                return ExitCode.OK
            time.sleep(POLL_S)
    except KeyboardInterrupt:
        return ExitCode.OK
