"""dun.core.textfiles: regular files inside the root only, bounded in size, never a device or a FIFO."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dun.core.textfiles import Unreadable, read_bytes, read_text


def test_a_regular_file_inside_the_root_is_read(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("hello\n")
    os.symlink("a.md", tmp_path / "link.md")
    assert read_bytes(tmp_path / "link.md", root=tmp_path) == b"hello\n"
    assert read_text(tmp_path / "a.md", root=tmp_path) == ("hello\n", "")


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/null", "/dev/full"])
def test_a_device_is_refused_before_it_is_opened(tmp_path: Path, target: str) -> None:
    os.symlink(target, tmp_path / "dev.md")
    assert read_text(tmp_path / "dev.md") == (None, "not a regular file")


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")  # nobody writes: an open for reading would block forever
    assert read_text(tmp_path / "pipe.md") == (None, "not a regular file")
    assert read_text(tmp_path) == (None, "not a regular file")


def test_a_symlink_or_a_dotdot_out_of_the_root_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (tmp_path / "secret.md").write_text("secret\n")
    os.symlink(tmp_path / "secret.md", root / "link.md")
    os.symlink(tmp_path, root / "up")
    for path in (root / "link.md", root / "up" / "secret.md", root / ".." / "secret.md"):
        with pytest.raises(Unreadable, match="outside the repository"):
            read_bytes(path, root=root)
    assert read_bytes(root / "link.md") == b"secret\n"  # without a root, only the kind and the size are checked


def test_the_size_is_bounded(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b"x" * 2049)
    assert read_bytes(tmp_path / "big", limit=4096) == b"x" * 2049
    with pytest.raises(Unreadable, match="larger than 2 KB"):
        read_bytes(tmp_path / "big", limit=2048)
    assert read_text(tmp_path / "missing")[1] == "No such file or directory"
