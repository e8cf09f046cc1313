"""The files outside the work tree that choose or configure a toolchain program, so that a check running it is not
reused after one changed: a version manager's shim (asdf, mise, pyenv, nodenv, goenv, rustup) runs whichever
version the nearest version file names, in the project's directory or any directory above it, or in the home
directory; and a toolchain reads its own settings there (`go env -w` writes `$GOENV`, cargo reads every
`.cargo/config.toml` above the project and in `$CARGO_HOME`, npm every `.npmrc`). PATH names the same shim before
and after, so its places on PATH alone do not tell.

Paths only (a few dozen per program, most missing): the caller takes their looks (dun/core/cache `stamp`).
"""

from __future__ import annotations

import functools
import os

# any program a version manager shims: asdf and mise read these in the directory and every directory above it
SHIMMED = (".tool-versions", ".mise.toml", "mise.toml")
_FAMILY = {"go": "go", "gofmt": "go", "staticcheck": "go", "govulncheck": "go", "golangci-lint": "go",
           "node": "node", "npm": "node", "npx": "node", "pnpm": "node", "yarn": "node", "corepack": "node",
           "cargo": "rust", "rustc": "rust", "rustup": "rust", "rustdoc": "rust",
           "python": "python", "python3": "python", "pip": "python", "pip3": "python", "pytest": "python",
           "tox": "python", "nox": "python", "uv": "python", "poetry": "python"}
# per family: file names looked for in the project's directory and every one above it
_ABOVE = {"go": (".go-version",), "node": (".node-version", ".nvmrc", ".npmrc"),
          "rust": ("rust-toolchain", "rust-toolchain.toml", ".cargo/config.toml", ".cargo/config"),
          "python": (".python-version",)}


def toolchain_files(program: str, root: str) -> list[str]:
    """Every file that may choose which `program` runs in `root`, or configure it (see the module's doc)."""
    return list(_files(os.path.basename(program), os.path.abspath(root), _env_key()))


def _env_key() -> tuple[str, ...]:
    names = ("HOME", "XDG_CONFIG_HOME", "GOENV", "GOENV_ROOT", "NODENV_ROOT", "VOLTA_HOME", "RUSTUP_HOME",
             "CARGO_HOME", "PYENV_ROOT", "ASDF_DATA_DIR", "ASDF_DEFAULT_TOOL_VERSIONS_FILENAME", "MISE_CONFIG_DIR")
    return tuple(os.environ.get(n, "") for n in names)


@functools.lru_cache(maxsize=64)
def _files(program: str, root: str, _env: tuple[str, ...]) -> tuple[str, ...]:
    family = _FAMILY.get(program) or ("rust" if program.startswith("cargo-") else "")
    home = os.path.expanduser("~")
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    versions = os.environ.get("ASDF_DEFAULT_TOOL_VERSIONS_FILENAME") or ".tool-versions"
    names = (versions, *SHIMMED[1:], *_ABOVE.get(family, ()))
    out: list[str] = []
    here = root
    while True:
        out += [os.path.join(here, name) for name in names]
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    out += [os.path.join(home, versions), os.path.join(os.environ.get("MISE_CONFIG_DIR")
                                                       or os.path.join(config, "mise"), "config.toml")]
    if family == "go":
        goenv = os.environ.get("GOENV")
        if goenv != "off":
            out.append(goenv or os.path.join(config, "go", "env"))
        out.append(os.path.join(os.environ.get("GOENV_ROOT") or os.path.join(home, ".goenv"), "version"))
    elif family == "node":
        out += [os.path.join(home, ".npmrc"),
                os.path.join(os.environ.get("NODENV_ROOT") or os.path.join(home, ".nodenv"), "version"),
                os.path.join(os.environ.get("VOLTA_HOME") or os.path.join(home, ".volta"), "tools", "user",
                             "platform.json")]
    elif family == "rust":
        cargo = os.environ.get("CARGO_HOME") or os.path.join(home, ".cargo")
        out += [os.path.join(os.environ.get("RUSTUP_HOME") or os.path.join(home, ".rustup"), "settings.toml"),
                os.path.join(cargo, "config.toml"), os.path.join(cargo, "config")]
    elif family == "python":
        out.append(os.path.join(os.environ.get("PYENV_ROOT") or os.path.join(home, ".pyenv"), "version"))
    return tuple(dict.fromkeys(out))
