"""Paths outside the work tree that a test runner's own config files name, so that a check running that runner is
not reused after one changed: a `jest.config.js` requiring `../shared/jest.base.js`, a `tsconfig.json` extending
`../tsconfig.base.json`, a vitest config importing `../vite.shared.ts`, pytest's `pythonpath = ["../lib"]`. Edited
there, they change what the run loads, and git sees nothing.

Read from the config files the runner reads at the check's directory (CONFIGS, by the check's `uses:`): every quoted
string that climbs out with `../`, resolved from the file's directory; a file (a module named without its suffix
too), or a tree look (dun/core/cache/tree.py) at a directory. The outside files found are read the same way once more
(a shared base extending another). A path computed at run time (`os.path.dirname(__file__)`) is not seen.
"""

from __future__ import annotations

import os
import re

from dun.core.cache.tree import PREFIX

_JS = ("package.json", "tsconfig.json", "babel.config.js", "babel.config.json", ".babelrc")
_VITE = tuple(f"{base}.config.{ext}" for base in ("vitest", "vite") for ext in ("ts", "js", "mts", "mjs", "cjs"))
CONFIGS = {
    "jest": (*(f"jest.config.{ext}" for ext in ("js", "cjs", "mjs", "ts", "json")), *_JS),
    "vitest": (*_VITE, "vitest.workspace.ts", "vitest.workspace.js", "vitest.workspace.json", *_JS),
    "mocha": (".mocharc.js", ".mocharc.cjs", ".mocharc.json", ".mocharc.yml", ".mocharc.yaml", *_JS),
    "ava": ("ava.config.js", "ava.config.cjs", "ava.config.mjs", *_JS),
    "node-test": _JS, "tape": _JS, "bun-test": ("bunfig.toml", *_JS),
    "typescript": ("tsconfig.json",), "typescript-build": ("tsconfig.json",),
    "pytest": ("pyproject.toml", "pytest.ini", "setup.cfg", "tox.ini", "conftest.py"),
}
_CLIMBS = re.compile(r"""["'](\.\.(?:/[^"'\s]*)?)["']""")
_SUFFIXES = ("", ".js", ".cjs", ".mjs", ".ts", ".mts", ".cts", ".json", "/index.js", "/index.ts")
READ_MAX = 256 * 1024
MAX_FILES = 32


def outside_paths(root: str, cwd: str, uses: str | None) -> list[str]:
    """The looks' keys (paths, `tree:` directories) of what the configs of the runner `uses` names outside `root`."""
    names = CONFIGS.get(uses or "")
    if not names:
        return []
    top = os.path.realpath(root)
    out: list[str] = []
    todo = [os.path.join(cwd, name) for name in names]
    seen: set[str] = set()
    depth = {path: 0 for path in todo}
    while todo and len(seen) < MAX_FILES:
        path = todo.pop(0)
        if path in seen:
            continue
        seen.add(path)
        for target in _named(path):
            real = os.path.realpath(target)
            if real == top or real.startswith(top + os.sep):
                continue  # inside the work tree: git sees it
            if os.path.isdir(real):
                out.append(PREFIX + real)
                continue
            found = next((real + s for s in _SUFFIXES if s and os.path.isfile(real + s)), real)
            out.append(found)
            if depth[path] < 1 and found not in depth:
                depth[found] = depth[path] + 1
                todo.append(found)
    return list(dict.fromkeys(out))


def _named(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(READ_MAX)
    except OSError:
        return []
    base = os.path.dirname(path)
    return [os.path.normpath(os.path.join(base, rel)) for rel in _CLIMBS.findall(text)]
