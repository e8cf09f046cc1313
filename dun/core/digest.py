"""SHA-256 for the paths that run before the rest of dun loads (`dun check`'s replay: dun/engine/replay.py).

`import hashlib` loads OpenSSL: 2 ms of CPU, a thirtieth of a replayed run on a large repository. CPython's own
SHA-256 module gives the same digests without it; hashlib stays the fallback on other implementations.
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


def file_sha256(fh: BinaryIO) -> bytes:
    """The SHA-256 digest of what is left to read of `fh`, read in 1 MiB chunks (as hashlib.file_digest)."""
    digest = sha256()
    while chunk := fh.read(1 << 20):
        digest.update(chunk)
    return bytes(digest.digest())
