"""Atomic writes (dun/core/atomic.py): the new content whole or the old, the file private, nothing left behind, and
a name planted where the temporary file would go is never written through."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from dun.core import atomic


def test_a_write_replaces_the_file_whole_private_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "state.json"
    atomic.write_bytes_atomic(target, b"one")
    atomic.write_bytes_atomic(target, b"two", durable=False)
    assert target.read_bytes() == b"two" and stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(p.name for p in target.parent.iterdir()) == ["state.json"]


def test_the_temporary_file_is_new_never_a_planted_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = tmp_path / "outside"
    outside.write_bytes(b"keep")
    names = iter([bytes(6), bytes([1] * 6)])
    monkeypatch.setattr(os, "urandom", lambda n: next(names))
    (tmp_path / f".t.{bytes(6).hex()}.tmp").symlink_to(outside)  # the first name it tries is taken by a link
    atomic.write_bytes_atomic(tmp_path / "t", b"new")
    assert (tmp_path / "t").read_bytes() == b"new" and outside.read_bytes() == b"keep"
