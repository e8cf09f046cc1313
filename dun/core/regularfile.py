"""Reading a file anyone could have replaced: only a regular file is read (a FIFO, a device or a directory is
refused, opened without blocking and checked with fstat before a byte is read; a link too unless the caller follows
links on purpose), never more than a cap. Used by every cache file and by the scan of git's config files.

Import-light (os, stat): the replay path and dun's first git start read files before the rest of dun loads.
"""

import os
import stat

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def read_regular(path: str, cap: int, follow: bool = False) -> bytes | None:
    """The bytes of `path` when it is a regular file (not a link, unless `follow`) of at most `cap` bytes; None
    otherwise."""
    try:
        fd = os.open(path, _FLAGS & ~getattr(os, "O_NOFOLLOW", 0) if follow else _FLAGS)
    except (OSError, ValueError):
        return None  # missing, a link (ELOOP), unreadable
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > cap:
            return None
        chunks = []
        left = st.st_size + 1  # one byte more: a file growing while read is a miss
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return data if len(data) <= st.st_size else None
    except OSError:
        return None
    finally:
        os.close(fd)
