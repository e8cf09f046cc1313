"""Read repository text files defensively: binary and non-UTF-8 files are reported, never raised."""

from __future__ import annotations

from pathlib import Path

MAX_TEXT_BYTES = 20 * 1024 * 1024


def read_text(path: Path, strict_utf8: bool = False) -> tuple[str | None, str]:
    """(text, "") on success; (None, reason) for unreadable, binary, oversized or (strict) non-UTF-8 files.

    Without `strict_utf8`, undecodable bytes are replaced so a stray byte does not hide a whole file.
    """
    try:
        size = path.stat().st_size
        if size > MAX_TEXT_BYTES:
            return None, f"larger than {MAX_TEXT_BYTES // (1024 * 1024)} MB"
        data = path.read_bytes()
    except OSError as exc:
        return None, exc.strerror or str(exc)
    if b"\0" in data[:8192]:
        return None, "binary"
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError as exc:
        if strict_utf8:
            return None, f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        return data.decode("utf-8", "replace"), ""
