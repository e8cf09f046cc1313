"""A Go project's own test command, told from its files: the build tags its `make test` (or `just test`) gives
`go test`, so that test files behind `//go:build integration` run in dun as they run there. Only the `test` recipe
counts: a separate `test-integration` target may need services an honest night does not have. Every look goes
through dun/checks/looked.py."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from dun.checks.looked import read
from dun.core.lazyre import LazyPattern

_TARGET = LazyPattern(r"^(?P<names>[\w .-]+?)\s*:(?!=)")
_TAGS = LazyPattern(r"^--?tags(?:=(?P<value>.*))?$")


def go_tags(root: Path) -> str:
    """`-tags=a,b` for the tags the project's own `go test` (its Makefile's or justfile's `test` recipe) is run
    with, else ''."""
    for name in ("Makefile", "GNUmakefile", "makefile", "justfile", "Justfile"):
        for line in recipe(read(root / name, root, 256 * 1024), "test"):
            tags = _tags_of(line)
            if tags:
                return f"-tags={shlex.quote(tags)}"
    return ""


def go_race(root: Path) -> str:
    """`-race` when the project's own `go test` (its `make test` or `just test` recipe) runs with the race detector:
    a data race its tests hit fails there (`race detected during execution of test`) and passes without it."""
    for name in ("Makefile", "GNUmakefile", "makefile", "justfile", "Justfile"):
        for line in recipe(read(root / name, root, 256 * 1024), "test"):
            if re.search(r"\bgo\s+test\b[^#]*\s-race\b|GOFLAGS=\S*-race\b.*\bgo\s+test\b", line):
                return "-race"
    return ""


def recipe(text: str, target: str) -> list[str]:
    """The lines of `target`'s recipe: the indented lines after its `target:` rule line."""
    lines: list[str] = []
    inside = False
    for line in text.splitlines():
        rule = _TARGET.match(line)
        if rule and not line[:1].isspace():
            inside = target in rule["names"].split()
            continue
        if inside and line[:1] in ("\t", " "):
            lines.append(line.strip().lstrip("@-"))
        elif inside and line.strip() and not line.lstrip().startswith("#"):
            inside = False
    return lines


def _tags_of(line: str) -> str:
    """The tags one `go test ...` command line gives (`-tags x`, `-tags=x,y`, `GOFLAGS=-tags=x`); '' for none or
    for tags a variable holds (`-tags $(TAGS)`)."""
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        return ""
    for at, word in enumerate(words):
        if word == "go" and words[at + 1: at + 2] == ["test"]:
            before = [w.split("=", 1)[1] for w in words[:at] if w.startswith("GOFLAGS=")]
            args = [*" ".join(before).split(), *words[at + 2:]]
            for i, arg in enumerate(args):
                found = _TAGS.match(arg)
                if found is None:
                    continue
                value = found["value"] if found["value"] is not None else (args[i + 1] if i + 1 < len(args) else "")
                return "" if "$" in value or not value else value
    return ""


_USE = LazyPattern(r"^\s*use\s+(?:\((?P<block>[^)]*)\)|(?P<one>\S+))", re.M)


def go_work_modules(root: Path) -> list[tuple[str, str]]:
    """(module path, its directory from `root`) for each module the go.work at `root` uses, when `root` has no go.mod
    of its own (a workspace of modules: `go test ./...` at its root matches none of them); [] otherwise."""
    if read(root / "go.mod", root) or not (text := read(root / "go.work", root)):
        return []
    found: list[tuple[str, str]] = []
    for use in _USE.finditer(re.sub(r"//[^\n]*", "", text)):
        for directory in (use["block"] or use["one"] or "").split():
            rel = directory.strip('"`').removeprefix("./").rstrip("/") or "."
            module = module_path(read(root / rel / "go.mod", root))
            if module and rel != "." and ".." not in rel.split("/"):
                found.append((module, rel))
    return found


def go_packages(root: Path) -> str:
    """The packages `go test`/`go vet` are given: `./...`, or each go.work module's (`./lib/... ./svc/...`)."""
    modules = go_work_modules(root)
    return " ".join(shlex.quote(f"./{rel}/...") for _, rel in modules) if modules else "./..."


def module_path(go_mod: str) -> str:
    """The `module` line of a go.mod's text; '' for none."""
    for line in go_mod.splitlines():
        words = line.split("//", 1)[0].split()
        if len(words) == 2 and words[0] == "module":
            return words[1].strip('"`')
    return ""


_REPLACE = LazyPattern(r"^\s*replace\s+(?:\((?P<block>[^)]*)\)|(?P<one>[^\n]+))", re.M)
_LOCAL = LazyPattern(r"=>\s*(?P<path>\.{1,2}/\S*|\.\.?$|/\S*)\s*$")
MAX_GO_FILES = 64  # go.mod and go.work files read to find what they name outside the repository


def go_inputs(root: Path, cwd: Path) -> list[str]:
    """What `go` reads beyond the work tree that its module files name: a go.work in any directory above (go looks
    upward for one; one made, edited or removed there changes the build), and the directories outside the
    repository that go.work's `use` and the `replace => ../dir` directives of go.work and go.mod name, each a tree
    look (dun/core/cache/tree.py: a file edited there, in place too, is a change). Directives are followed from
    module to module, each directory once, at most MAX_GO_FILES files."""
    import os

    from dun.core.cache.tree import PREFIX

    out = [os.path.join(parent, name) for parent in (cwd.resolve(), *cwd.resolve().parents)
           for name in ("go.work", "go.work.sum")]
    inside = str(root.resolve()).rstrip("/") + "/"
    gowork = os.environ.get("GOWORK", "")
    work = Path(gowork) if gowork not in ("", "off") else next(
        (p / "go.work" for p in (cwd.resolve(), *cwd.resolve().parents) if (p / "go.work").is_file()), None)
    queue = [cwd.resolve() / "go.mod", *([work] if work is not None and gowork != "off" else [])]
    seen: set[str] = set()
    while queue and len(seen) < MAX_GO_FILES:
        path = queue.pop(0)
        if str(path) in seen:
            continue
        seen.add(str(path))
        try:
            text = re.sub(r"//[^\n]*", "", path.read_text(encoding="utf-8", errors="replace")[:1 << 20])
        except OSError:
            continue
        named = [d.strip('"`') for use in _USE.finditer(text) for d in (use["block"] or use["one"] or "").split()]
        for rep in _REPLACE.finditer(text):
            for line in (rep["block"] or rep["one"] or "").splitlines():
                if (local := _LOCAL.search(line.strip())) is not None:
                    named.append(local["path"])
        for directory in named:
            full = (path.parent / directory).resolve()
            if not full.is_dir():
                continue
            queue.append(full / "go.mod")
            if not (str(full).rstrip("/") + "/").startswith(inside):
                out.append(PREFIX + str(full))
    return list(dict.fromkeys(out))
