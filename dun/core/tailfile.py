"""A stream written to a file in bounded space: past the cap the file keeps only its last part, cut at a line start,
so the end of an agent's output (where its status block is) survives any amount of output before it."""

from __future__ import annotations

import os
import threading
from pathlib import Path

CHUNK = 1 << 16


class TailFile:
    """Writes go to `path` (created 0600); at most `cap` bytes are kept. A write error (a full disk) is kept in
    `error` and every later write is dropped: the writer keeps draining its pipe, the caller decides."""

    def __init__(self, path: Path, cap: int) -> None:
        # read-write: restarting the file reads its tail back
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o600)
        self.cap = max(int(cap), 2)
        self.size = 0
        self.dropped = 0  # bytes cut from the front
        self.error: OSError | None = None
        self._lock = threading.Lock()

    def write(self, data: bytes) -> None:
        with self._lock:
            if self.error is not None or self.fd < 0:
                return
            try:
                if self.size + len(data) > self.cap:
                    self._restart(data)
                else:
                    self._put(data)
            except OSError as exc:
                self.error = exc

    def _restart(self, data: bytes) -> None:
        """The file starts over with the last half of (what it holds + `data`), from a line start."""
        keep = self.cap // 2
        if len(data) >= keep:
            tail = data[-keep:]
        else:
            need = keep - len(data)
            tail = os.pread(self.fd, need, max(0, self.size - need)) + data
        cut = tail.find(b"\n")
        if 0 <= cut < len(tail) - 1:
            tail = tail[cut + 1:]
        self.dropped += self.size + len(data) - len(tail)
        os.ftruncate(self.fd, 0)
        self.size = 0
        self._put(tail)

    def _put(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.pwrite(self.fd, view, self.size)
            self.size += written
            view = view[written:]

    def pump(self, fd: int) -> None:
        """Copy the pipe `fd` into the file until its end (run in a thread); closes `fd`."""
        try:
            while chunk := os.read(fd, CHUNK):
                self.write(chunk)
        except OSError:
            pass
        finally:
            os.close(fd)

    def close(self) -> None:
        with self._lock:
            if self.fd >= 0:
                os.close(self.fd)
                self.fd = -1
