"""Read repository files defensively: bounded in size, regular files only, never through a symlink that leaves the
repository; binary and non-UTF-8 files are reported, never raised."""

from __future__ import annotations

import functools
import os
import stat
from pathlib import Path

MAX_TEXT_BYTES = 20 * 1024 * 1024


class Unreadable(OSError):
    """A file dun refuses to read (outside the repository, not a regular file, too large)."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(reason)
        self.strerror = reason
        self.filename = str(path)


class Refusal(str):
    """A reason `read_text` gives for a file it refuses for what the file is (where it leads, its type, size or
    content): the same file gives the same reason, so a result made of it may be reused while the file is unchanged.
    The reason of an OSError (permission denied, an I/O error) is a plain str: it may not repeat."""


def inside(path: Path | str, root: Path | str) -> bool:
    """Whether `path`, with every symlink resolved, is `root` or below it."""
    return _within(os.path.realpath(path), root)


@functools.lru_cache(maxsize=64)
def _real_root(root: str) -> str:
    return os.path.realpath(root).rstrip(os.sep) + os.sep


def _within(real: str, root: Path | str) -> bool:
    top = _real_root(str(root))
    return real + os.sep == top or real.startswith(top)


def _opened_path(fd: int, path: Path | str) -> str:
    """Where the open file really is: one readlink on Linux, else the resolved path."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(path)


def read_bytes(path: Path | str, limit: int = MAX_TEXT_BYTES, root: Path | str | None = None) -> bytes:
    """At most `limit` bytes of a regular file, else `Unreadable` (or the OSError of the stat or open).

    A FIFO, a device (`/dev/zero`), a socket or a directory is refused before it is opened (opening a device can
    act on it), and checked again on the open file. With `root`, a file whose real path (symlinks resolved) is
    outside `root` is refused.
    """
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise Unreadable(path, "not a regular file")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # replaced between the stat and the open
            raise Unreadable(path, "not a regular file")
        if root is not None and not _within(_opened_path(fd, path), root):
            raise Unreadable(path, "outside the repository (through a symlink or ..)")
        if info.st_size > limit:
            raise Unreadable(path, f"larger than {_size(limit)}")
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while size <= limit:  # the size may grow while we read: the bound holds whatever fstat said
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise Unreadable(path, f"larger than {_size(limit)}")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _size(limit: int) -> str:
    return f"{limit / (1024 * 1024):g} MB" if limit >= 1024 * 1024 else f"{limit / 1024:g} KB"


def read_text(path: Path, strict_utf8: bool = False, root: Path | None = None,
              limit: int = MAX_TEXT_BYTES) -> tuple[str | None, str]:
    """(text, "") on success; (None, reason) for unreadable, special, escaping, binary, oversized or (strict)
    non-UTF-8 files.

    Without `strict_utf8`, undecodable bytes are replaced so a stray byte does not hide a whole file.
    """
    try:
        data = read_bytes(path, limit, root)
    except Unreadable as exc:
        return None, Refusal(exc.strerror)
    except OSError as exc:
        return None, exc.strerror or str(exc)
    if b"\0" in data[:8192]:
        return None, Refusal("binary")
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError as exc:
        if strict_utf8:
            return None, Refusal(f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})")
        return data.decode("utf-8", "replace"), ""
