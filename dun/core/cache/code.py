"""Which dun is running (`CODE`), for the header of every cache file whose payload this code computed: what other
code computed (a parser fixed since, a dun reinstalled at the same version number) is a miss, never replayed as this
dun's finding. Imported only by a cache file that needs it (dun/core/cache/file.py), so the replay path, whose
payload carries the looks of every module it was made with, pays nothing; taken once, as the module loads.
"""

from __future__ import annotations

import os


def _code_looks() -> str:
    """Which dun is running: its own source tree's looks, hashed. Installed by pip (under site-packages or
    dist-packages), a new version or a reinstall from git at the same version number replaces files, which the
    directories' looks show (a few dozen stats); an editable install is edited in place, so each file is looked at
    (about 300 stats, under a millisecond)."""
    import marshal

    from dun.core.digest import sha256

    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    installed = any(f"{os.sep}{name}{os.sep}" in top for name in ("site-packages", "dist-packages"))
    looks: list[object] = []
    pending = [top]
    while pending:
        folder = pending.pop()
        try:
            st = os.stat(folder)
            with os.scandir(folder) as found:
                entries = sorted(found, key=lambda e: e.name)
        except OSError:
            looks.append(folder)
            continue
        looks.append((folder, st.st_mtime_ns, st.st_ino))
        for entry in entries:
            if entry.name == "__pycache__":  # Python writes there as it imports
                continue
            if entry.is_dir(follow_symlinks=False):
                pending.append(entry.path)
            elif not installed:
                fs = entry.stat(follow_symlinks=False)
                looks.append((entry.name, fs.st_size, fs.st_mtime_ns, fs.st_ctime_ns, fs.st_ino))
    return sha256(marshal.dumps(looks)).hexdigest()


CODE = _code_looks()
