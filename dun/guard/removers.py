"""Tools that remove files without being rm: the trash (trash-put, gio trash, kioclient move ... trash:/), secure
erasers (wipe), build tools' portable rm (cmake -E rm/remove_directory), and archivers that move their sources into
the archive (zip -m, 7z -sdel). Their operands are deletes, judged by where they land like rm's."""

from __future__ import annotations

from dun.guard.expand import Val

_TRASH = frozenset({"trash", "trash-put", "trash-cli", "trash-rm", "rmtrash", "gtrash", "wipe", "safe-rm", "rip",
                    "rmw", "gomi", "trashy"})
_CMAKE_RM = frozenset({"rm", "remove", "remove_directory", "rmdir"})


def removes(prog: str, args: list[Val]) -> list[Val]:
    """The paths this command removes."""
    words = [a.text for a in args]
    operands = [a for a in args if not a.text.startswith("-")]
    if prog in _TRASH:
        return operands
    if prog == "gio" and words[:1] in (["trash"], ["remove"], ["rm"]):
        return operands[1:]
    if prog in ("kioclient", "kioclient5", "kioclient6") and words[:1] in (["move"], ["mv"]) and any(
            w.startswith("trash:") for w in words):
        return [a for a in operands[1:] if not a.text.startswith("trash:")]
    if prog == "cmake" and words[:1] == ["-E"] and len(words) > 1 and words[1] in _CMAKE_RM:
        return [a for a in args[2:] if not a.text.startswith("-")]
    if prog == "zip" and any(w.startswith("-") and not w.startswith("--") and "m" in w for w in words):
        return operands[1:]  # zip -rm out.zip DIR: DIR goes into the archive and is removed
    if prog in ("7z", "7za", "7zz") and "-sdel" in words:
        return operands[2:]  # 7z a -sdel out.7z FILES
    return []
