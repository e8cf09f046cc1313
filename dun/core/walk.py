"""The one walk beneath a directory that looks at what it holds, for every look that needs more than its listing:
what a link to a directory holds (`indexlook.tree_hash`), what a declared glob matches (dun/engine/inputs.py), and
the slow path of a tree look (dun/core/cache/tree.py).

Links to directories are followed or not (`follow`); followed, each real directory is entered once, so a link back
up is no loop and two links to one place cost one walk. Past `limit` entries the walk stops with `TooMany`: a look
that cannot be kept cheaply is unknown, never partial.

Import-light (os only): the replay path hashes links' targets before the rest of dun loads.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing's: this module loads on the replay path
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import AnyStr

WALK_LIMIT = 20_000  # entries a look walks beneath a directory at most; past it, what the directory holds is unknown


class TooMany(Exception):
    """More entries beneath the directory than the look may cost."""


def walk(top: AnyStr, limit: int, follow: bool = True) -> Iterator[tuple[AnyStr, list[AnyStr], list[AnyStr]]]:
    """(dirpath, dirnames, filenames) of `top` and every directory beneath it, names sorted, top first; links to
    directories entered when `follow` (each real directory once), else listed among the files' names. Raises
    TooMany once more than `limit` entries have been listed."""
    seen = 0
    visited = {os.path.realpath(top)}
    for dirpath, dirnames, filenames in os.walk(top, followlinks=follow):
        if follow:
            real = {d: os.path.realpath(os.path.join(dirpath, d)) for d in dirnames}
            dirnames[:] = [d for d in dirnames if real[d] not in visited]
            visited.update(real[d] for d in dirnames)
        else:  # os.walk lists a link to a directory among the directories, and does not enter it
            links = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
            if links:
                dirnames[:] = [d for d in dirnames if d not in links]
                filenames = filenames + links
        dirnames.sort()
        seen += len(dirnames) + len(filenames)
        if seen > limit:
            raise TooMany(seen)
        yield dirpath, dirnames, sorted(filenames)
