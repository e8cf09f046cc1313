"""The replay path's SHA-256 gives hashlib's digests, so caches and fingerprints keep their meaning."""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys

from dun.core.digest import file_sha256, sha256


def test_the_same_digests_as_hashlib() -> None:
    data = bytes(range(256)) * 9000  # past one read chunk
    assert sha256(b"abc").hexdigest() == hashlib.sha256(b"abc").hexdigest()
    assert file_sha256(io.BytesIO(data)) == hashlib.sha256(data).digest()


def test_the_replay_path_does_not_load_openssl() -> None:
    code = "import sys, dun.engine.replay; print('hashlib' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout == "False\n"
