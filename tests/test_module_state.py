"""No module of dun/ keeps state in a module global that changes at run time: state belongs to an object (the
session, the store, the loop, a cache) that is passed explicitly, so two loops, two sessions or two tests in one
process never see each other's. An AST scan fails on a `global` statement, and on a module-level container (a
list, dict, set, deque...) that a function body mutates; the allow list below is the few that must stay, each
with its reason."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# module:name -> why it stays a module global. Keep this short: a new entry needs a reason no object can own it.
ALLOWED = {
    # A signal handler (SIGTERM/SIGINT/SIGHUP) must stop the process groups of the commands running now, and a
    # handler receives only (signum, frame): the registry it reads has to be reachable without an object. It is
    # the process's own fact (which children it started), guarded by a lock, and emptied as each command ends.
    "dun.core.reaper:_REGISTRY": "a signal handler's registry of running process groups",
    # Memos of pure functions, as functools.lru_cache is (which this scan does not flag either): what they hold is
    # decided by their whole key alone, so no caller can tell them apart from recomputing, but by the time.
    "dun.core.globs:_STORE": "glob list -> its joined regex source, kept on disk by dun's and pathspec's versions",
    "dun.guard.rules:_BUILTIN_INDEX": "program -> the built-in rules that name it (the built-in rules never change)",
}

_MUTATORS = {"append", "extend", "insert", "pop", "popitem", "clear", "update", "setdefault", "add", "discard",
             "remove", "appendleft", "extendleft", "popleft", "rotate", "sort", "reverse", "__setitem__",
             "__delitem__", "move_to_end"}
_CONTAINER_CALLS = {"dict", "list", "set", "defaultdict", "OrderedDict", "deque", "Counter", "WeakValueDictionary",
                    "WeakKeyDictionary", "WeakSet", "bytearray"}


def _is_container(value: ast.expr | None) -> bool:
    if isinstance(value, ast.List | ast.Dict | ast.Set | ast.ListComp | ast.DictComp | ast.SetComp):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        return name in _CONTAINER_CALLS
    return False


def _changes_itself(cls: ast.ClassDef) -> bool:
    """Whether a method other than `__init__` assigns to or mutates an attribute of `self`."""
    for method in cls.body:
        if not isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef) or method.name == "__init__":
            continue
        for node in ast.walk(method):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else \
                [node.target] if isinstance(node, ast.AugAssign | ast.AnnAssign) else []
            if any(isinstance(t, ast.Attribute | ast.Subscript) and _root_name(t) == "self" for t in targets):
                return True
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS \
                    and isinstance(node.func.value, ast.Attribute) and _root_name(node.func.value) == "self":
                return True
    return False


def _module_state(tree: ast.Module) -> tuple[set[str], set[str], set[str]]:
    """The module's containers and instances of its own classes (both changed by name: `_X[k] = v`, `_X.attr = v`,
    `_X.items.append(v)`), and those of the instances whose methods change them."""
    classes = {c.name: c for c in tree.body if isinstance(c, ast.ClassDef)}
    containers: set[str] = set()
    instances: set[str] = set()
    changing: set[str] = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else []
        names = {t.id for t in targets if isinstance(t, ast.Name)}
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if _is_container(value):
            containers |= names
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in classes:
            instances |= names
            if _changes_itself(classes[value.func.id]):
                changing |= names
    return containers, instances, changing


def _locals(func: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    """Names a function binds itself (its parameters and assignments): those shadow a module global."""
    args = func.args
    bound = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    bound |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
    return bound


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Subscript | ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _mutations(func: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, globals_: set[str]) -> set[str]:
    shadowed = _locals(func)
    watched = globals_ - shadowed
    found: set[str] = set()
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
            name = _root_name(node.func.value)
            if name in watched:
                found.add(name)
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for target in targets:
            if isinstance(target, ast.Subscript | ast.Attribute):
                name = _root_name(target)
                if name in watched:
                    found.add(name)
    return found


def module_state(path: Path, root: Path = ROOT) -> list[str]:
    """`module:name: what` for each run-time change of module state in the file at `path` (under `root`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    module = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
    containers, instances, changing = _module_state(tree)
    found = [f"{module}:{name}: an instance of a class whose methods change it" for name in sorted(changing)]
    containers |= instances
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            found += [f"{module}:{name}: `global` statement (line {node.lineno})" for name in node.names]
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            found += [f"{module}:{name}: mutated in a function (line {node.lineno})"
                      for name in sorted(_mutations(node, containers))]
    return found


def test_no_module_global_changes_at_run_time() -> None:
    found = [f for path in sorted((ROOT / "dun").rglob("*.py")) for f in module_state(path)]
    unexplained = sorted({f for f in found if f.split(":", 2)[0] + ":" + f.split(":", 2)[1] not in ALLOWED})
    assert not unexplained, ("module state changed at run time (give it an owner passed explicitly, or add it to "
                             "ALLOWED with the reason no object can own it):\n" + "\n".join(unexplained))


def test_every_allowed_global_is_still_there() -> None:
    """An entry for a global that was removed would allow a new one of that name without a reason."""
    found = {":".join(f.split(":", 2)[:2]) for path in sorted((ROOT / "dun").rglob("*.py")) for f in module_state(path)}
    assert set(ALLOWED) <= found


def test_the_scan_sees_each_kind_of_change(tmp_path: Path) -> None:
    source = ("import collections\n_a = []\n_b: dict[str, int] = {}\n_c = collections.deque()\n_d = set()\n"
              "_e = {}\n_f = []\nCONST = (1, 2)\n"
              "def f():\n    _a.append(1)\n    _b['k'] = 2\n    _c.popleft()\n"
              "def g():\n    global CONST\n    CONST = 3\n    del _e['x']\n"
              "def h(_d):\n    _d.add(1)\n"  # a parameter shadows the global: not a change of it
              "def k():\n    _f = []\n    _f.append(1)\n"  # nor does a local of that name
              "def m():\n    return _d.copy()\n"  # reading is fine
              "class Memo:\n    def __init__(self):\n        self.seen = {}\n"
              "    def see(self, k):\n        self.seen[k] = 1\n"
              "class Frozen:\n    def __init__(self, x):\n        self.x = x\n"
              "_memo = Memo()\n_frozen = Frozen(1)\n")
    (tmp_path / "dun").mkdir()
    path = tmp_path / "dun" / "mod.py"
    path.write_text(source, encoding="utf-8")
    names = {f.split(":")[1] for f in module_state(path, tmp_path)}
    assert names == {"_a", "_b", "_c", "CONST", "_e", "_memo"}
