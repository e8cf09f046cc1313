"""`hooks`: git hooks the project configures (pre-commit, lefthook) that are not installed in this clone, so the
checks they run never happen before a commit. A warning: a fresh clone (CI's included) has no hooks until someone
runs the install command."""

from __future__ import annotations

from pathlib import Path

from dun.config.schema import Field
from dun.config.yamlio import load_yaml_file
from dun.core.errors import ConfigError
from dun.core.git import git
from dun.core.textfiles import read_bytes
from dun.engine.checkapi import CheckContext, CheckSpec, CheckType
from dun.engine.hookspecs import hookimpl
from dun.engine.model import Item, Outcome, Status

TOOLS = ("pre-commit", "lefthook")
FIELDS = {
    "tools": Field("list", "Hook managers to look for.", default=list(TOOLS), item=Field("str", "tool", choices=TOOLS),
                   scalar_ok=True),
}
PRE_COMMIT_CONFIGS = (".pre-commit-config.yaml", ".pre-commit-config.yml")
LEFTHOOK_CONFIGS = tuple(f"{dot}lefthook.{ext}" for dot in ("", ".") for ext in ("yml", "yaml", "toml", "json"))
GIT_HOOKS = frozenset({
    "applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit", "prepare-commit-msg",
    "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge", "pre-push", "post-rewrite",
    "pre-auto-gc", "sendemail-validate", "post-index-change", "reference-transaction",
})
INSTALL = {"pre-commit": "pre-commit install --install-hooks", "lefthook": "lefthook install"}


def _load(path: Path) -> object:
    import json
    import tomllib

    if path.suffix == ".toml":
        return tomllib.loads(read_bytes(path).decode("utf-8"))
    if path.suffix == ".json":
        return json.loads(read_bytes(path))
    return load_yaml_file(path)


def configured(root: Path, tool: str) -> tuple[str, list[str]] | None:
    """(config file, git hooks it wants) for a tool the repository configures, else None."""
    for name in PRE_COMMIT_CONFIGS if tool == "pre-commit" else LEFTHOOK_CONFIGS:
        path = root / name
        if not path.is_file():
            continue
        try:
            data = _load(path)
        except (OSError, ValueError, ConfigError):
            data = None  # an unreadable config still means the tool is meant to run; its own hook is the default
        data = data if isinstance(data, dict) else {}
        if tool == "pre-commit":
            wanted = data.get("default_install_hook_types") or ["pre-commit"]
        else:
            wanted = [k for k in data if k in GIT_HOOKS] or ["pre-commit"]
        return name, [str(h) for h in wanted]
    return None


def hooks_dir(root: Path) -> Path | None:
    """Where git looks for hooks in this clone (`core.hooksPath` or `.git/hooks`, worktrees included)."""
    proc = git(root, "rev-parse", "--git-path", "hooks", check=False, neutral=False)  # the user's hooksPath
    if proc.returncode != 0:
        return None
    return root / proc.stdout.decode("utf-8", "surrogateescape").strip()


def _installed(hook: Path, tool: str) -> bool:
    try:
        return tool.encode() in read_bytes(hook)  # both write their name into the hook
    except OSError:
        return False


def run(spec: CheckSpec, ctx: CheckContext) -> Outcome:
    if not ctx.is_git:
        return Outcome(Status.SKIP, "not a git repository: no hooks to install")
    found = {tool: c for tool in spec.options["tools"] if (c := configured(ctx.root, tool)) is not None}
    if not found:
        return Outcome(Status.SKIP, f"no hook manager configured ({', '.join(spec.options['tools'])})")
    directory = hooks_dir(ctx.root)
    if directory is None:
        return Outcome(Status.ERROR, "git cannot tell where its hooks live (git rev-parse --git-path hooks failed)")
    shown = directory.relative_to(ctx.root).as_posix() if directory.is_relative_to(ctx.root) else str(directory)
    items: list[Item] = []
    nexts: list[str] = []
    for tool, (config, wanted) in found.items():
        missing = [h for h in wanted if not _installed(directory / h, tool)]
        items += [Item(f"{tool} hook '{h}' is not installed in {shown}", config) for h in missing]
        if missing:
            nexts.append(INSTALL[tool])
    if not items:
        return Outcome(Status.PASS, "hooks installed: " + ", ".join(f"{t} ({', '.join(w)})"
                                                                  for t, (_, w) in found.items()))
    return Outcome(Status.WARN, f"{len(items)} configured hook(s) not installed: {items[0].text}"[:200], items=items,
                   next=spec.next or f"Run `{' && '.join(nexts)}` once in this clone.")


def inputs(spec: CheckSpec, ctx: CheckContext) -> list[str]:
    """The hook managers' configs and the installed hooks: outside the work tree's fingerprint. With no config at
    all the answer reads nothing else, and git is not asked where the hooks live."""
    configs = [*PRE_COMMIT_CONFIGS, *LEFTHOOK_CONFIGS]
    if not any((ctx.root / name).is_file() for name in configs):
        return configs
    directory = hooks_dir(ctx.root) if ctx.is_git else None
    hooks = [str(directory), *(str(directory / h) for h in sorted(GIT_HOOKS))] if directory else []
    # where the hooks live is the user's core.hooksPath (any config file, includes): set, the answer looks elsewhere
    where = [f"git-config:{ctx.root}\0core.hooksPath"] if ctx.is_git else []
    return [*PRE_COMMIT_CONFIGS, *LEFTHOOK_CONFIGS, *hooks, *where]


# Registered by the git module's hook (dun/checks/git_status.py): git-status and hooks are both about the clone.
HOOKS_TYPE = CheckType("hooks", "Git hooks a hook manager configures but this clone has not installed.", FIELDS, run,
                       inputs=inputs, stamped=lambda spec: True)  # it reads only its inputs, stamped before and after


@hookimpl
def dun_check_types() -> list[CheckType]:
    return [HOOKS_TYPE]
