"""The project's own Python: what `{python}` in a command check stands for.

A project's tests must run with the interpreter and packages the project set up, not whatever `python3` is first
on PATH. In order: a virtual environment in the repository (`.venv`, `venv`), an activated one (`VIRTUAL_ENV`),
the project's environment manager when the project uses it and it is installed (`uv run`, `poetry run`,
`hatch run`), else `python3`. That last one, in a `src/` layout (`src/PKG/__init__.py`), runs with `src` first
on PYTHONPATH: the project's code is installed in no environment dun can find (tox builds its own, and a copy made
there is not the work tree), so the tests import the work tree's, as an editable install would.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from dun.checks.looked import dir_names, executable, is_dir, is_file, seen, which
from dun.core.textfiles import read_bytes

VENV_DIRS = (".venv", "venv")


@dataclass(frozen=True)
class Python:
    argv: tuple[str, ...]
    source: str  # why this one: ".venv", "VIRTUAL_ENV", "uv.lock", ...
    src: str | None = None  # a src/ layout's directory put first on PYTHONPATH (relative to the command's cwd)

    @property
    def shell(self) -> str:
        words = " ".join(shlex.quote(a) for a in self.argv)
        if self.src is None:
            return words
        return f'PYTHONPATH={shlex.quote(self.src)}"${{PYTHONPATH:+:$PYTHONPATH}}" {words}'

    @property
    def shown(self) -> str:
        return " ".join(self.argv) if self.src is None else f"PYTHONPATH={self.src} {' '.join(self.argv)}"


def _venv_python(directory: Path) -> Path | None:
    for name in ("bin/python", "Scripts/python.exe"):
        candidate = directory / name
        if executable(candidate):
            return candidate
    return None


def _pyproject_mentions(root: Path, marker: str) -> bool:
    try:
        return marker.encode() in read_bytes(seen(root / "pyproject.toml"), root=root)
    except OSError:
        return False


def project_python(root: Path, cwd: Path | None = None) -> Python:
    for base in dict.fromkeys((cwd or root, root)):
        for name in VENV_DIRS:
            found = _venv_python(base / name)
            if found is not None:
                rel = os.path.relpath(found, cwd or root)
                return Python((rel if not rel.startswith("..") else str(found),), name)
    active = os.environ.get("VIRTUAL_ENV")
    if active:
        found = _venv_python(Path(active))
        if found is not None:
            return Python((str(found),), "VIRTUAL_ENV")
    managers = (
        ("uv", is_file(root / "uv.lock") or _pyproject_mentions(root, "[tool.uv"), "uv.lock"),
        ("poetry", is_file(root / "poetry.lock") or _pyproject_mentions(root, "[tool.poetry"), "poetry.lock"),
        ("hatch", is_file(root / "hatch.toml") or _pyproject_mentions(root, "[tool.hatch.envs"), "hatch"),
    )
    for tool, used, source in managers:
        if used and which(tool):
            return Python((tool, "run", "python"), source)
    src = _src_layout(root)
    return Python(("python3",), "PATH", os.path.relpath(src, cwd or root) if src is not None else None)


def _src_layout(root: Path) -> Path | None:
    """`src/` when it holds a package (`src/PKG/__init__.py`) or a module and the root holds no package of its own
    name there (a flat layout whose `src` is something else)."""
    src = root / "src"
    if not is_dir(src) or is_file(src / "__init__.py"):
        return None
    names = dir_names(src, dirs_only=False)
    if any(n.endswith(".py") for n in names) or any(is_file(src / n / "__init__.py") for n in names):
        return src
    return None


def setup_hint(python: Python, module: str) -> str:
    """What to run when `module` is missing from the project's environment."""
    if python.argv[0] in ("uv", "poetry", "hatch"):
        sync = {"uv": "uv sync", "poetry": "poetry install", "hatch": "hatch env create"}[python.argv[0]]
        return f"Set up the project's environment (`{sync}`), or add {module} to its dev dependencies, then re-run."
    if python.source == "PATH":
        return (f"Create the project's environment and install {module} into it, e.g. `python3 -m venv .venv && "
                f".venv/bin/pip install -e '.[test]'` (or `.venv/bin/pip install {module}`), then re-run.")
    return f"Install {module} into the project's environment: `{python.shell} -m pip install {module}`, then re-run."


def base_sites(venv: str) -> list[str] | None:
    """The site directories a virtual environment made with `include-system-site-packages = true` (pyvenv.cfg)
    imports from besides its own, as the base interpreter's `site` adds them: the base's site-packages (and a Debian
    Python's dist-packages, /usr/local's included) and the user's site-packages (~/.local, PYTHONUSERBASE), which
    such a venv enables; the user's is named whether it exists or not (one made later is a change). [] for a venv
    that does not include them; None when its base cannot be told from pyvenv.cfg (no `home`, no site directory
    there, no version): what it imports cannot be known without running it."""
    import glob

    try:
        with open(os.path.join(venv, "pyvenv.cfg"), encoding="utf-8", errors="replace") as fh:
            text = fh.read(1 << 16)
    except OSError:
        return None
    cfg = {}
    for line in text.splitlines():  # as site.venv() reads it
        key, eq, value = line.partition("=")
        if eq:
            cfg[key.strip().lower()] = value.strip()
    if cfg.get("include-system-site-packages", "").lower() != "true":
        return []
    home = cfg.get("home")
    if not home or not os.path.isabs(home):
        return None
    version = ".".join(cfg.get("version", cfg.get("version_info", "")).split(".")[:2])
    if version.count(".") != 1:
        return None
    minor = f"python{version}"
    prefix = os.path.dirname(os.path.normpath(home))
    prefixes = [prefix, "/usr/local"] if prefix == "/usr" else [prefix]  # Debian's site adds /usr/local
    found: list[str] = []
    for p in map(glob.escape, prefixes):
        found += sorted(glob.glob(os.path.join(p, "lib*", minor, "site-packages"))
                        + glob.glob(os.path.join(p, "lib*", minor, "dist-packages"))
                        + glob.glob(os.path.join(p, "lib*", "python3", "dist-packages"))
                        + glob.glob(os.path.join(p, "Lib", "site-packages")))
    if not found:
        return None
    user_base = os.environ.get("PYTHONUSERBASE") or os.path.join(os.path.expanduser("~"), ".local")
    return [*found, os.path.join(user_base, "lib", minor, "site-packages")]
