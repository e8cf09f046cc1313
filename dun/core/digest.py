"""SHA-256 for the paths that run before the rest of dun loads (`dun check`'s replay: dun/engine/replay.py).

`import hashlib` loads OpenSSL: 2 ms of CPU, a thirtieth of a replayed run on a large repository. CPython's own
SHA-256 module gives the same digests without it; hashlib stays the fallback on other implementations. BLAKE2b
likewise, for keys over megabytes (a 50,000-file listing: 1.7 ms, where SHA-256 takes 5).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: this module loads before everything else
if TYPE_CHECKING:
    from collections.abc import Callable
    from hashlib import _Hash
    from typing import BinaryIO


def _constructor() -> Callable[..., _Hash]:
    # CPython 3.12+ or 3.11: only the one that exists is asked for, a failed import searches every sys.path entry
    for module in ("_sha2",) if sys.version_info >= (3, 12) else ("_sha256",):
        try:
            return __import__(module).sha256  # type: ignore[no-any-return]  # importlib would load warnings
        except (ImportError, AttributeError):
            continue
    from hashlib import sha256

    return sha256


sha256 = _constructor()


def blake2b(data: bytes = b"") -> _Hash:
    """A BLAKE2b hash of `data` (more may be fed): 3x SHA-256's speed, without OpenSSL; its module is loaded on the
    first call, which the replay path never makes."""
    try:
        from _blake2 import blake2b as make
    except ImportError:
        from hashlib import blake2b as make
    return make(data)  # type: ignore[return-value]  # typeshed's blake2b is a hash object like the others


def file_sha256(fh: BinaryIO) -> bytes:
    """The SHA-256 digest of what is left to read of `fh`, read in 1 MiB chunks (as hashlib.file_digest)."""
    digest = sha256()
    while chunk := fh.read(1 << 20):
        digest.update(chunk)
    return bytes(digest.digest())
