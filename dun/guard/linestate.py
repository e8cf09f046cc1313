"""What a command leaves for the commands after it in the same line, beyond variables: the positional parameters
(`set -- a b c`), the symlinks it makes (`ln -s TARGET NAME`), which later paths are resolved through, and what it
prints for the next stage of a pipe."""

from __future__ import annotations

import binascii
import json
import posixpath
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from dun.guard import tasks, textops
from dun.guard.effects import Facts, child, find_parts
from dun.guard.expand import Ctx, Env, Val, current_ifs, git_listing, ifs_split
from dun.guard.options import Spec, parse
from dun.guard.paths import normalize
from dun.guard.runs import Stream
from dun.guard.shell import Group, Pipeline, Simple
from dun.guard.textops import echo, printf

_PRINT_NAMES = frozenset({"realpath", "readlink", "stat", "basename", "dirname"})
_PASS_PATHS = frozenset({"grep", "egrep", "fgrep", "rg", "sort", "uniq", "head", "tail", "cat", "tee", "tr", "awk",
                         "cut", "sed"})
_LN = Spec("tS", frozenset({"--target-directory", "--suffix"}))
_READ = Spec("adinNptu")
_MAPFILE = Spec("dnOsuC")
_XARGS_FILE = Spec("aEdILnPs", frozenset({"--arg-file"}), stop=True)


def positional(args: list[Val], ctx: Ctx) -> None:
    """`set -- a b c` (or `set a b c`): the positional parameters."""
    words = [a.text for a in args]
    if "--" in words:
        params = args[words.index("--") + 1:]
    elif args and not words[0].startswith(("-", "+")):
        params = args
    else:
        return
    for i in range(1, 10):
        ctx.vars.pop(str(i), None)
    for i, v in enumerate(params, 1):
        ctx.vars[str(i)] = v.text if v.known else None
    ctx.arrays["@"] = [v.text for v in params] if all(v.known for v in params) else None
    ctx.vars["#"] = str(len(params))


@contextmanager
def prefix_ifs(argv: list[Val], prefix: dict[str, str | None], ctx: Ctx) -> Iterator[None]:
    """`IFS=: read -r a b`: the IFS assigned for one `read` (or mapfile) is the one it splits with."""
    if "IFS" not in prefix or not argv or argv[0].text not in ("read", "mapfile", "readarray"):
        yield
        return
    had, before = "IFS" in ctx.vars, ctx.vars.get("IFS")
    ctx.vars["IFS"] = prefix["IFS"]
    try:
        yield
    finally:
        if had:
            ctx.vars["IFS"] = before
        else:
            ctx.vars.pop("IFS", None)


def read_line(args: list[Val], text: str | None, ctx: Ctx) -> None:
    """`read [-r] [-a ARR] [-d DELIM] a b c <<< "x y z"`: the variables get the fields of what it reads, split on IFS
    (the last one takes the rest); from input the guard cannot see, they are unknown."""
    o = parse(args, _READ)
    names = [v.text for v in o.operands if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v.text)] or ["REPLY"]
    arrays = [v.text for v in o.value("-a")]
    delim = o.value("-d")
    line = None
    if text is not None:
        end = delim[0].text[:1] if delim else "\n"
        line = text.split(end, 1)[0] if end else text.split("\0", 1)[0]
        if not o.has("-r"):
            line = re.sub(r"\\(.)", r"\1", line.replace("\\\n", ""))
    for name in arrays:
        items = ifs_split(line, current_ifs(ctx)) if line is not None and line.strip() else None
        ctx.arrays[name] = items
        ctx.vars[name] = items[0] if items else None
    if arrays:
        return
    fields = ifs_split(line, current_ifs(ctx)) if line is not None and line.strip() else []
    for i, name in enumerate(names):
        ctx.arrays.pop(name, None)
        if line is None:
            ctx.vars[name] = None
        elif i == len(names) - 1:
            ctx.vars[name] = current_ifs(ctx)[:1].join(fields[i:])  # the last one takes the rest
        else:
            ctx.vars[name] = fields[i] if i < len(fields) else ""


def read_lines(args: list[Val], text: str | None, ctx: Ctx) -> None:
    """`mapfile -t a <<< ...` (readarray): one item per line of what it reads, when that is known."""
    o = parse(args, _MAPFILE)
    name = next((v.text for v in o.operands), "MAPFILE")
    lines = text.split("\n") if text is not None else None
    if lines is not None and lines and lines[-1] == "":
        lines.pop()
    ctx.arrays[name] = lines if lines is None or o.has("-t") else [line + "\n" for line in lines]
    ctx.vars[name] = lines[0] if lines else None


def copied(prog: str, args: list[Val], ctx: Ctx, env: Env) -> dict[str, str]:
    """`cp .envrc.example .envrc`: the copy holds the text of a file in the repository the guard can read."""
    if prog not in ("cp", "install"):
        return {}
    o = parse(args, _LN)
    if len(o.operands) != 2 or o.value("-t", "--target-directory") or not all(v.known for v in o.operands):
        return {}
    source, dest = (normalize(v.text, ctx.cwd) for v in o.operands)
    got = tasks.read(source, ctx, env) if source is not None and dest is not None else None
    return {dest: got[0]} if dest is not None and got is not None and got[0] is not None else {}


_GIT_HOOKS = frozenset({
    "applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit", "prepare-commit-msg",
    "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge", "pre-push", "pre-receive", "update",
    "post-receive", "post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite"})


def hook_texts(paths: list[str], ctx: Ctx) -> list[str]:
    """The shell text of git hooks written in the line anywhere in the repository (.husky/pre-push, .githooks/...):
    git runs them later, for everyone who clones the project."""
    out = []
    for path in dict.fromkeys(paths):
        text = ctx.written.get(path)
        first = (text or "").split("\n", 1)[0]
        shell = not first.startswith("#!") or re.search(r"\b(?:sh|bash|zsh|dash)\b", first)
        if text and shell and posixpath.basename(path) in _GIT_HOOKS and "/.git/hooks/" not in path:
            out.append(text)
        elif text and path.endswith(EDITOR_CONFIGS):
            out += editor_commands(text)
    return out


# Files whose commands an editor runs when the folder is opened or its container made: .vscode/tasks.json with
# "runOn": "folderOpen", a dev container's lifecycle commands
EDITOR_CONFIGS = ("/.vscode/tasks.json", "/.devcontainer/devcontainer.json", "/.devcontainer.json")
_LIFECYCLE = frozenset({"initializeCommand", "onCreateCommand", "updateContentCommand", "postCreateCommand",
                        "postStartCommand", "postAttachCommand"})


_ON_OPEN = re.compile(r"[\"']runOn[\"']\s*:\s*[\"']folderOpen[\"']")


def runs_on_open(path: str, text: str | None) -> bool:
    """A VS Code tasks.json (JSON with comments) with a task the editor runs by itself when the folder is opened."""
    return path.endswith("/.vscode/tasks.json") and bool(text) and bool(_ON_OPEN.search(text or ""))


def planted(paths: list[str], ctx: Ctx) -> list[Facts]:
    """Files written in the line that run code by themselves later, outside this session (a folder-open task)."""
    return [Facts(unit=f"> {p}", signals={"plant-startup"}, notes={"plant-startup": "why: a task VS Code runs when "
                                                                  "the folder is opened"})
            for p in dict.fromkeys(paths) if runs_on_open(p, ctx.written.get(p))]


def editor_commands(text: str) -> list[str]:
    """The shell commands of a tasks.json (tasks run on folder open) or devcontainer.json (lifecycle commands)."""
    try:
        data = json.loads(text)
    except ValueError:
        return []
    out: list[str] = []
    if not isinstance(data, dict):
        return out
    for task in data.get("tasks", []) if isinstance(data.get("tasks"), list) else []:
        if isinstance(task, dict) and isinstance(task.get("runOptions"), dict) and task["runOptions"].get(
                "runOn") == "folderOpen":
            out.append(" ".join(str(x) for x in [task.get("command", ""), *(task.get("args") or [])]))
    for key in _LIFECYCLE & data.keys():
        value = data[key]
        items = value.values() if isinstance(value, dict) else [value]
        out += [v if isinstance(v, str) else " ".join(map(str, v)) for v in items if isinstance(v, (str, list))]
    return out


def xargs_input(argv: list[Val], ctx: Ctx, output_of: Callable[[str, Ctx], Stream]) -> str | None:
    """What `xargs -a FILE` reads, when it is known: a file written earlier in the line, or <(printf ...)."""
    if not argv or posixpath.basename(argv[0].text) != "xargs":
        return None
    for f in parse(argv[1:], _XARGS_FILE).value("-a", "--arg-file"):
        if f.text.startswith("<(") and f.subs:
            return output_of(f.subs[-1], ctx).text
        path = normalize(f.text, ctx.cwd) if f.known else None
        if path is not None and ctx.written.get(path) is not None:
            return ctx.written[path]
    return None


def symlink(args: list[Val], ctx: Ctx) -> None:
    """Remember `ln -s TARGET NAME`, so later paths through NAME land where TARGET is."""
    o = parse(args, _LN)
    if not o.has("-s", "--symbolic") or not o.operands:
        return
    ops, into = o.operands, o.value("-t", "--target-directory")
    if into:
        pairs = [(t, Val(into[0].text.rstrip("/") + "/" + t.text.rstrip("/").rsplit("/", 1)[-1])) for t in ops]
    elif len(ops) == 1:
        pairs = [(ops[0], Val(ops[0].text.rstrip("/").rsplit("/", 1)[-1] or "."))]
    else:
        pairs = [(ops[0], ops[1])] if len(ops) == 2 else [
            (t, Val(ops[-1].text.rstrip("/") + "/" + t.text.rstrip("/").rsplit("/", 1)[-1])) for t in ops[:-1]]
    for target, name in pairs:
        link = normalize(name.text, ctx.cwd) if name.known else None
        if link is None:
            continue
        base = link.rsplit("/", 1)[0] or "/"
        ctx.links[link] = normalize(target.text, base) if target.known and target.glob_at is None else None


def stream_out(prog: str, args: list[Val], feed: Stream | None) -> Stream:
    """What a command prints, as far as it is known (echo/printf text, find/ls names, filters passing through)."""
    if prog == "echo":
        words = args
        while words and re.fullmatch(r"-[neE]+", words[0].text):
            words = words[1:]
        return Stream(echo([v.text for v in args]), words)
    if prog == "printf" and args:
        rest = args[1:]
        return Stream(printf(args[0].text, [v.text for v in rest]), rest or None)
    if prog == "find":
        return Stream(None, find_parts(args)[0])
    if prog == "base64" and {"-d", "--decode", "-D"} & {a.text for a in args} and feed is not None and feed.text:
        try:  # echo Z2l0IHN0YXR1cw== | base64 -d: text known to the guard, judged as what it says
            return Stream(binascii.a2b_base64(feed.text.strip()).decode("utf-8"), None, feed.dl)
        except (binascii.Error, UnicodeDecodeError):
            return Stream(None, None, feed.dl)
    if prog in ("tr", "rev") and feed is not None and feed.text is not None:  # tr 'A-Za-z' 'N-ZA-Mn-za-m' (ROT13)
        out = textops.tr(feed.text, [a.text for a in args]) if prog == "tr" else textops.rev(feed.text.rstrip("\n"))
        return Stream(out, None, feed.dl)
    listed = git_listing([prog, *(a.text for a in args)]) if prog == "git" else None
    if listed is not None:  # git ls-files | xargs rm
        return Stream(None, [Val(listed, glob_at=2 if listed == "./*" else None)])
    if prog == "ls":
        names = [a for a in args if not a.text.startswith("-")]
        return Stream(None, [child(a) for a in names] or None)
    if prog in _PRINT_NAMES:  # realpath x, readlink -f x, stat -c %n x: the names themselves
        names = [a for a in args if not a.text.startswith(("-", "%"))]
        return Stream(None, names or None)
    if prog in _PASS_PATHS and feed is not None:
        files = [a for a in args if not a.text.startswith("-")]
        text = feed.text if prog == "tee" or (prog == "cat" and not files) else None
        return Stream(text, feed.paths, feed.dl)
    return Stream()


def read_vars(body: list[Pipeline]) -> list[str]:
    """The variables `read` sets in a loop body (`pgrep x | while read p; do kill $p; done`)."""
    return [w.raw for p in body for st in p.stages if isinstance(st, Simple) and st.words
            and st.words[0].raw == "read" for w in st.words[1:] if not w.raw.startswith("-")]


def self_calls(body: list[Pipeline], name: str) -> int:
    """How many times a function body calls the function itself (a fork bomb calls itself twice)."""
    count = 0
    for pipeline in body:
        for stage in pipeline.stages:
            if isinstance(stage, Group):
                count += self_calls(stage.body, name)
            elif stage.words and stage.words[0].raw == name:
                count += 1
    return count


_SHELL_SINK = re.compile(r">\(\s*(?:exec\s+)?(?:\S*/)?(?:sh|bash|zsh|dash|ksh|ash|python[0-9.]*|node|perl|ruby|php)"
                         r"(?:\s+-[a-zA-Z]*s?)*\s*\)")


def shell_sink(raw: str) -> bool:
    """A process substitution that runs what is written into it: `>(sh)`, `>(bash -s)`, `>(python3)`."""
    return bool(_SHELL_SINK.fullmatch(raw.strip()))
