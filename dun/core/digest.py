"""SHA-256 for the paths that run before the rest of dun loads (`dun check`'s replay: dun/engine/replay.py).

`import hashlib` loads OpenSSL: 2 ms of CPU, a thirtieth of a replayed run on a large repository. CPython's own
SHA-256 module gives the same digests without it; hashlib stays the fallback on other implementations. BLAKE2b
likewise, for keys over megabytes (a 50,000-file listing: 1.7 ms, where SHA-256 takes 5).
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: this module loads before everything else
if TYPE_CHECKING:
    from collections.abc import Callable
    from hashlib import _Hash
    from typing import BinaryIO


def _constructor() -> Callable[..., _Hash]:
    for module in ("_sha2", "_sha256"):  # CPython 3.12+, 3.11
        try:
            return __import__(module).sha256  # type: ignore[no-any-return]  # importlib would load warnings
        except (ImportError, AttributeError):
            continue
    from hashlib import sha256

    return sha256


sha256 = _constructor()


def _blake2b() -> Callable[..., _Hash]:
    try:
        return __import__("_blake2").blake2b  # type: ignore[no-any-return]  # 3x SHA-256's speed, no OpenSSL
    except (ImportError, AttributeError):
        import hashlib

        return hashlib.blake2b  # type: ignore[return-value]


blake2b = _blake2b()


def file_sha256(fh: BinaryIO) -> bytes:
    """The SHA-256 digest of what is left to read of `fh`, read in 1 MiB chunks (as hashlib.file_digest)."""
    digest = sha256()
    while chunk := fh.read(1 << 20):
        digest.update(chunk)
    return bytes(digest.digest())
