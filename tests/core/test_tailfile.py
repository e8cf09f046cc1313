"""dun.core.tailfile: output kept in bounded space, its end always, cut at a line start; write errors kept."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

from dun.core.tailfile import TailFile


def test_under_the_cap_everything_is_kept(tmp_path: Path) -> None:
    sink = TailFile(tmp_path / "out", 100)
    sink.write(b"one\n")
    sink.write(b"two\n")
    sink.close()
    assert (tmp_path / "out").read_bytes() == b"one\ntwo\n"
    assert sink.dropped == 0
    assert oct((tmp_path / "out").stat().st_mode & 0o777) == "0o600"


def test_past_the_cap_the_end_is_kept_from_a_line_start(tmp_path: Path) -> None:
    sink = TailFile(tmp_path / "out", 1000)
    lines = [f"line {i:05d}\n".encode() for i in range(5000)]
    for line in lines:
        sink.write(line)
    sink.write(b"the last words")
    sink.close()
    kept = (tmp_path / "out").read_bytes()
    assert len(kept) <= 1000
    assert kept.endswith(b"line 04999\nthe last words")
    assert kept.startswith(b"line ")  # whole lines only
    assert sink.dropped == sum(map(len, lines)) + len(b"the last words") - len(kept)


def test_one_write_larger_than_the_cap(tmp_path: Path) -> None:
    sink = TailFile(tmp_path / "out", 100)
    sink.write(b"a" * 500 + b"\n" + b"b" * 30)
    sink.close()
    assert (tmp_path / "out").read_bytes() == b"b" * 30 or (tmp_path / "out").read_bytes().endswith(b"b" * 30)
    assert len((tmp_path / "out").read_bytes()) <= 100


def test_a_full_disk_is_kept_as_the_error_and_later_writes_are_dropped(tmp_path: Path) -> None:
    os.symlink("/dev/full", tmp_path / "out")  # every write: ENOSPC
    sink = TailFile(tmp_path / "out", 100)
    sink.write(b"x\n")
    assert sink.error is not None and sink.error.errno == errno.ENOSPC
    sink.write(b"y\n")  # no raise
    sink.close()


def test_pump_copies_a_pipe_until_its_end(tmp_path: Path) -> None:
    sink = TailFile(tmp_path / "out", 1 << 20)
    read, write = os.pipe()
    pump = threading.Thread(target=sink.pump, args=(read,))
    pump.start()
    os.write(write, b"x" * 200_000)
    os.close(write)
    pump.join(timeout=10)
    sink.close()
    assert (tmp_path / "out").read_bytes() == b"x" * 200_000
