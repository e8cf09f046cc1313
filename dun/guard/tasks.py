"""Files that tools run: a Makefile for `make`, package.json scripts for `npm run`/`npm test`/`yarn x`, conftest.py
for pytest, tox.ini for tox, setup.py for `pip install .`, justfile, noxfile.py, Taskfile.yml and Rakefile. A command
that writes one of these and then runs its tool is judged by what the file does; so is a tool run on such a file
already on disk in the repository (make, npm and friends, just, tox) and a script run from it (runs.py).

`sources()` names the files a call reads and how to pick the code that runs out of each; `read()` gets a file's
text: from earlier in the same command line, else from disk when it is a regular file inside the repository and
not too large.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass

from dun.guard.expand import Ctx, Env, Val
from dun.guard.options import Spec, parse
from dun.guard.paths import normalize, under
from dun.guard.textops import make_recipes

MAX_BYTES = 256 * 1024
_MAKE = Spec("fCIjloW", frozenset({"--file", "--makefile", "--directory", "--include-dir", "--jobs", "--what-if"}))
_MAKE_DRY = frozenset({"-n", "--dry-run", "--just-print", "--recon", "-q", "--question", "-p", "--print-data-base",
                       "-h", "--help", "-v", "--version"})
_NODE = frozenset({"npm", "pnpm", "yarn", "bun"})
_NODE_SPEC = Spec("Cw", frozenset({"--prefix", "--workspace", "--dir", "--cwd", "--filter"}))
_INSTALL = ("preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare", "postprepare")
_NODE_BUILTINS = frozenset({"add", "remove", "install", "i", "ci", "init", "create", "exec", "dlx", "x", "info", "view",
                            "why", "outdated", "upgrade", "up", "update", "link", "unlink", "pack", "publish", "login",
                            "config", "cache", "audit", "list", "ls", "version", "help", "import", "store", "patch",
                            "workspaces", "workspace", "global", "bin", "set", "dedupe", "prune", "licenses", "plugin",
                            "node", "npm", "constraints", "explain", "rebuild", "root", "search", "whoami", "rm", "un",
                            "uninstall", "ln", "it", "cit", "t", "run", "run-script", "test", "start"})
_RULE_LINE = re.compile(r"^([^\s:=#][^:=]*?)\s*::?(?!=)\s*([^;]*)(?:;(.*))?$")


@dataclass(frozen=True)
class Source:
    path: str  # absolute
    kind: str  # shell, python, ruby
    pick: Callable[[str], str]  # the file's text -> the code that runs
    disk: bool = True  # read from disk too (not only when written earlier in the line)


def _whole(text: str) -> str:
    return text


def _go_files(args: list[Val], cwd: str) -> list[str]:
    """The Go files `go run` builds: the .go files named, else those of the package directory named first (on disk,
    at most 32, not its tests)."""
    named = [normalize(a.text, cwd) for a in args if a.text.endswith(".go")]
    if named:
        return [p for p in named if p is not None]
    first = next((a.text for a in args if not a.text.startswith("-")), "")
    where = normalize(first, cwd) if first.startswith(("./", "../")) else None
    try:
        names = sorted(os.listdir(where))[:256] if where and os.path.isdir(where) else []
    except OSError:
        return []
    return [posixpath.join(where, n) for n in names if n.endswith(".go") and not n.endswith("_test.go")][:32] \
        if where else []


def sources(prog: str, args: list[Val], cwd: str | None) -> list[Source]:
    if cwd is None:
        return []
    if prog in ("make", "gmake", "bmake"):
        return _make(args, cwd)
    if prog in _NODE:
        return _node(prog, args, cwd)
    def at(name: str) -> str:
        return posixpath.join(cwd, name)

    if prog in ("pytest", "py.test"):
        names = ("conftest.py", "tests/conftest.py", "test/conftest.py")
        return [Source(at(n), "python", _whole, False) for n in names]
    if prog == "tox":
        found = parse(args, Spec("ce", frozenset({"--conf", "--env"}))).value("-c", "--conf")
        path = normalize(found[0].text, cwd) if found else None
        return [Source(path or at("tox.ini"), "shell", tox_commands)]
    if (prog in ("pip", "pip3") and args[:1] and args[0].text == "install" and any(
            a.text in (".", "./", "-e.") or a.text.startswith(".[") for a in args)) or (
            prog.startswith("python") and args[:1] and args[0].text == "setup.py"):
        return [Source(at("setup.py"), "python", _whole, False)]
    if prog == "go" and args[:1] and args[0].text == "run":  # go run main.go, go run ./cmd/x: what it compiles
        return [Source(path, "rust", _whole) for path in _go_files(args[1:], cwd)]
    if prog == "just":
        return [Source(at(n), "shell", just_recipes) for n in ("justfile", "Justfile", ".justfile")]
    if prog == "nox":
        return [Source(at("noxfile.py"), "python", _whole, False)]
    if prog in ("task", "go-task"):
        return [Source(at(n), "shell", taskfile_commands) for n in ("Taskfile.yml", "Taskfile.yaml", "taskfile.yml")]
    if prog == "rake":
        return [Source(at(n), "ruby", _whole, False) for n in ("Rakefile", "rakefile", "Rakefile.rb")]
    if prog in _CODE_CONFIGS:  # vite.config.js, build.rs, Gemfile, ...: code the tool runs as it starts
        if prog == "cargo" and not (args and args[0].text in _CARGO_BUILDS):
            return []
        return [Source(at(n), _CODE_CONFIGS[prog][0], _whole, False) for n in _CODE_CONFIGS[prog][1]]
    if prog in _LISTED:  # .envrc, Procfile, .pre-commit-config.yaml: commands the tool runs
        name, pick = _LISTED[prog]
        return [Source(at(name), "shell", pick)]
    return []


def _js(*stems: str) -> tuple[str, tuple[str, ...]]:
    return "node", tuple(f"{s}.{ext}" for s in stems for ext in ("js", "mjs", "cjs", "ts", "mts", "cts"))


def package_bin(prog: str, args: list[Val]) -> list[str] | None:
    """`pnpm prisma migrate reset`, `yarn eslint .`, `bun vite build`: a word that is not one of the package
    manager's commands runs a script of that name or the package's program of that name; the program, as argv."""
    if prog in ("pnpm", "yarn", "bun") and args and args[0].text == "run":  # bun run --bun rimraf x
        args = parse(args[1:], Spec(stop=True)).operands
    if prog not in ("pnpm", "yarn", "bun") or not args or args[0].text.startswith("-") \
            or args[0].text in _NODE_BUILTINS:
        return None
    return [a.text for a in args] if all(a.known for a in args) else None


def procfile_commands(text: str) -> str:
    return "\n".join(m.group(1) for line in text.splitlines() if (m := re.match(r"^[\w-]+:\s*(.+)$", line)))


def precommit_entries(text: str) -> str:
    """The `entry:` commands of local and system hooks (others come from repositories pre-commit fetches)."""
    return "\n".join(m.group(1).strip("'\"") for line in text.splitlines()
                     if (m := re.match(r"^\s*-?\s*entry:\s*(.+?)\s*$", line)))


# Tools that load configuration written in a programming language (written earlier in the line) before they run
_CODE_CONFIGS: dict[str, tuple[str, tuple[str, ...]]] = {
    "vite": _js("vite.config", "postcss.config", "tailwind.config"), "vitest": _js("vitest.config", "vite.config"),
    "webpack": _js("webpack.config", "postcss.config", "babel.config"), "webpack-cli": _js("webpack.config"),
    "jest": _js("jest.config", "babel.config"), "rollup": _js("rollup.config"), "next": _js("next.config"),
    "nuxt": _js("nuxt.config"), "nuxi": _js("nuxt.config"), "astro": _js("astro.config"), "gulp": _js("gulpfile"),
    "grunt": _js("Gruntfile", "gruntfile"), "eslint": _js("eslint.config", ".eslintrc"),
    "babel": _js("babel.config", ".babelrc"), "prettier": _js("prettier.config", ".prettierrc"),
    "playwright": _js("playwright.config"), "cypress": _js("cypress.config"), "karma": _js("karma.conf"),
    "mocha": _js(".mocharc"), "ava": _js("ava.config"), "tsup": _js("tsup.config"), "remix": _js("remix.config"),
    "gatsby": _js("gatsby-config", "gatsby-node"), "stylelint": _js("stylelint.config", ".stylelintrc"),
    "tailwindcss": _js("tailwind.config"), "postcss": _js("postcss.config"), "svelte-kit": _js("svelte.config"),
    "cargo": ("rust", ("build.rs",)), "bundle": ("ruby", ("Gemfile",)), "vagrant": ("ruby", ("Vagrantfile",)),
    "fastlane": ("ruby", ("fastlane/Fastfile", "Fastfile")), "pod": ("ruby", ("Podfile",)),
}
_CARGO_BUILDS = frozenset({"build", "b", "check", "c", "test", "t", "run", "r", "bench", "clippy", "doc", "d",
                           "install", "publish", "package"})
_LISTED: dict[str, tuple[str, Callable[[str], str]]] = {
    "direnv": (".envrc", _whole), "foreman": ("Procfile", procfile_commands),
    "honcho": ("Procfile", procfile_commands), "overmind": ("Procfile", procfile_commands),
    "pre-commit": (".pre-commit-config.yaml", precommit_entries),
}


def _make(args: list[Val], cwd: str) -> list[Source]:
    o = parse(args, _MAKE)
    if any(f in _MAKE_DRY for f in o.flags):
        return []
    for d in o.value("-C", "--directory"):
        cwd = normalize(d.text, cwd) or cwd
    targets = [v.text for v in o.operands if "=" not in v.text]
    files = [v.text for v in o.value("-f", "--file", "--makefile") if v.text not in ("-", "/dev/stdin")]
    names = files or ["GNUmakefile", "makefile", "Makefile"]
    return [Source(normalize(n, cwd) or n, "shell", lambda text: make_targets(text, targets)) for n in names]


def make_targets(text: str, targets: list[str]) -> str:
    """The recipes make runs for `targets` (the first target when none), prerequisites first."""
    rules: dict[str, tuple[list[str], list[str]]] = {}
    first: str | None = None
    current: list[str] = []
    for line in text.splitlines():
        if line.startswith("\t"):
            for name in current:
                rules[name][1].append(line)
            continue
        m = _RULE_LINE.match(line)
        if m is None:
            current = [] if line.strip() and not line.startswith(" ") else current
            continue
        current = [n for n in m.group(1).split() if not n.startswith(".")]
        for name in current:
            rules.setdefault(name, ([], []))[0].extend(m.group(2).split())
            if m.group(3):
                rules[name][1].append("\t" + m.group(3))
        first = first or (current[0] if current else None)
    out: list[str] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen or name not in rules:
            return
        seen.add(name)
        for pre in rules[name][0]:
            visit(pre)
        out.extend(rules[name][1])

    for target in targets or ([first] if first else []):
        visit(target)
    return make_recipes("\n".join(out))


def _node(prog: str, args: list[Val], cwd: str) -> list[Source]:
    o = parse(args, _NODE_SPEC)
    for d in o.value("--prefix", "-C", "--dir", "--cwd"):
        cwd = normalize(d.text, cwd) or cwd
    words = [v.text for v in o.operands]
    if not words or (words[0] in ("install", "i", "ci") and len(words) == 1):
        names: tuple[str, ...] = _INSTALL
    elif words[0] in ("run", "run-script", "rum", "urn") and len(words) > 1:
        names = (f"pre{words[1]}", words[1], f"post{words[1]}")
    elif words[0] in ("test", "t", "tst", "start", "stop", "restart"):
        name = "test" if words[0] in ("t", "tst") else words[0]
        names = (f"pre{name}", name, f"post{name}")
    elif prog != "npm" and words[0] not in _NODE_BUILTINS:  # yarn build, pnpm lint, bun dev
        names = (f"pre{words[0]}", words[0], f"post{words[0]}")
    else:
        return []
    return [Source(posixpath.join(cwd, "package.json"), "shell", lambda text: package_scripts(text, names))]


def package_scripts(text: str, names: tuple[str, ...]) -> str:
    try:
        scripts = json.loads(text).get("scripts", {})
    except (ValueError, AttributeError):
        return ""
    if not isinstance(scripts, dict):
        return ""
    return "\n".join(str(scripts[n]) for n in names if isinstance(scripts.get(n), str))


def tox_commands(text: str) -> str:
    """The commands of every [testenv*] section, with tox's substitutions made shell-like."""
    out: list[str] = []
    section, key = "", ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            section, key = stripped, ""
            continue
        if not section.startswith("[testenv") or not stripped or stripped.startswith(("#", ";")):
            continue
        if line[:1] in (" ", "\t") and key:
            out.append(stripped)
            continue
        name, eq, value = line.partition("=")
        key = name.strip() if eq and name.strip() in ("commands", "commands_pre", "commands_post") else ""
        if key and value.strip():
            out.append(value.strip())
    subs = {"{homedir}": "~", "{toxinidir}": ".", "{toxworkdir}": ".tox", "{posargs}": "", "{envtmpdir}": "/tmp/tox"}
    joined = "\n".join(out)
    for name, value in subs.items():
        joined = joined.replace(name, value)
    return re.sub(r"\{[^}\s]*\}", "$TOX_SUBSTITUTION", joined)


def just_recipes(text: str) -> str:
    return "\n".join(line.strip().lstrip("@-") for line in text.splitlines()
                     if line[:1] in (" ", "\t") and line.strip() and not line.strip().startswith("#"))


def taskfile_commands(text: str) -> str:
    found = [m.group(1) for line in text.splitlines()
             if (m := re.match(r"^\s*-\s+(?:cmd:\s*)?(.+)$", line) or re.match(r"^\s*cmd:\s*(.+)$", line))]
    return "\n".join(c.strip().strip("'\"") for c in found)


def read(path: str, ctx: Ctx, env: Env, disk: bool = True) -> tuple[str | None, bool] | None:
    """(text or None when written earlier with unknown content, whether it came from disk), or None when the file
    is neither written earlier in the line nor (with `disk`) a readable regular file inside the repository."""
    if path in ctx.written:
        return ctx.written[path], False
    return read_disk(path, ctx, env) if disk else None


def read_disk(path: str, ctx: Ctx, env: Env) -> tuple[str | None, bool] | None:
    """(the text, True) of a readable regular file inside the repository, bounded; None otherwise."""
    if ctx.remote or not under(path, env.root) or path == env.root:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
            return None
        return os.read(fd, MAX_BYTES).decode("utf-8", "replace"), True
    except OSError:
        return None
    finally:
        os.close(fd)
