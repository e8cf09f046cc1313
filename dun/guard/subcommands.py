"""A command's subcommand, options and operands for the rules, read the way its program reads them: git's global
options first and its abbreviated long options written out (gitread.py), `docker compose`'s own options after
`compose`, and the `option=value` strings rules match (`-X=DELETE`, `-c=core.pager=...`, `config=KEY=VALUE` for a
key `git config` sets)."""

from __future__ import annotations

import re
from dataclasses import replace

from dun.guard import gitread
from dun.guard.expand import Val
from dun.guard.options import SPECS, Opts, Spec, parse

# Programs whose subcommand has options of its own, parsed after it: `docker compose -f x.yml down -v`.
_SUB_SPECS = frozenset({"docker", "podman", "nerdctl"})
_COMPOSE = frozenset({"docker-compose", "podman-compose"})
_RUSTUP_PROXIES = frozenset({"cargo", "rustc", "rustdoc", "rustfmt", "cargo-clippy", "clippy-driver", "rust-gdb"})
_COMPOSE_COMMAND = Spec("t", frozenset({"--timeout", "--rmi", "--scale", "--entrypoint", "--env", "--user",
                                        "--workdir", "--volume", "--publish", "--name", "--label"}))


def command_opts(prog: str, args: list[Val], config: dict[str, str] | None = None) -> tuple[str, Opts, list[str]]:
    """(subcommand, options of what follows it, `option=value` strings). For git, `config` is what `git config`
    set earlier in the command line; it and `-c key=value` become `-c=key=value` values, keys as git compares
    them."""
    if prog == "git":
        return _git(args, config or {})
    if prog in _RUSTUP_PROXIES and args and args[0].text.startswith("+"):
        args = args[1:]  # cargo +nightly publish: rustup's toolchain, then cargo's own command line
    spec = SPECS.get(prog, Spec())
    if prog in _SUB_SPECS:
        top = parse(args, replace(spec, stop=True))
        sub = top.operands[0].text if top.operands else ""
        if sub == "compose":
            opts = _compose(top.operands[1:], SPECS[f"{prog} {sub}"])
            merged = Opts(top.flags + opts.flags, {**top.values, **opts.values}, opts.operands)
            return sub, merged, option_values(merged)
        if f"{prog} {sub}" in SPECS:
            opts = parse(top.operands[1:], SPECS[f"{prog} {sub}"])
            merged = Opts(top.flags + opts.flags, {**top.values, **opts.values}, opts.operands)
            return sub, merged, option_values(merged)
    opts = _compose(args, spec) if prog in _COMPOSE else parse(args, spec)
    if opts.operands:
        return opts.operands[0].text, Opts(opts.flags, opts.values, opts.operands[1:]), option_values(opts)
    return "", opts, option_values(opts)


def _compose(args: list[Val], spec: Spec) -> Opts:
    """Compose's own options (-f FILE, -p NAME) come before its command; after it, the command's (rm -fsv: force,
    stop, volumes)."""
    top = parse(args, replace(spec, stop=True))
    rest = parse(top.operands[1:], _COMPOSE_COMMAND)
    return Opts(top.flags + rest.flags, {**top.values, **rest.values}, top.operands[:1] + rest.operands)


def _git(args: list[Val], line_config: dict[str, str]) -> tuple[str, Opts, list[str]]:
    top = parse(args, SPECS["git"])
    pairs = [(gitread.normal_key(k), v) for k, _, v in (c.text.partition("=") for c in top.value("-c"))]
    config = [f"-c={k}={v}" for k, v in [*line_config.items(), *pairs]]
    if not top.operands:
        return "", top, config
    sub = top.operands[0].text
    opts = parse(top.operands[1:], SPECS.get(f"git {sub}", Spec()))
    opts = Opts(gitread.expand_flags(sub, opts.flags), gitread.expand_values(sub, opts.values), opts.operands)
    values = config + option_values(opts)
    values += _remote_url(sub, opts, {**line_config, **dict(pairs)})
    if sub == "clean" and opts.operands and all(_BUILD_DIR.fullmatch(o.text) for o in opts.operands):
        values.append("clean-scope=build")  # git clean -fd build/: build output only
    if sub == "config" and (setting := gitread.config_set(opts)) is not None:
        values.append(f"config={setting[0]}={setting[1]}")
        if (host := _redirected(*setting)) is not None:
            values.append(f"redirect={host}")
        if gitread.plain_tool(*setting):
            values.append(f"config-plain={setting[0]}")
    return sub, opts, values


_URL = re.compile(r"^(?!file://)[a-z][a-z0-9+.-]*://|^[\w.-]+@[\w.-]+:|^[\w-]+(?:\.[\w-]+)+:(?!\d+$)[\w~./-]+")


_BUILD_DIR = re.compile(r"(?:\./)?(?:[\w.-]+/)*(?:build|dist|out|target|coverage|htmlcov|\.cache|tmp|\.tmp|"
                        r"node_modules|\.next|\.nuxt|\.turbo|__pycache__|\.pytest_cache|\.mypy_cache|\.ruff_cache|"
                        r"\.tox|\.nox|bin|obj|_build|site|public/build|storybook-static)/?")


def _host(url: str) -> str:
    m = re.match(r"^(?:[a-z][a-z0-9+.-]*://)?(?:[^@/]*@)?([^:/]+)", url)
    return m.group(1).lower() if m else url


def _redirected(key: str, value: str) -> str | None:
    """The host a url.<base>.insteadOf setting sends another host's fetches or pushes to (not https to ssh of the
    same host, which is everyday)."""
    if not (key.startswith("url.") and key.endswith((".insteadof", ".pushinsteadof"))):
        return None
    base = key[4:].rsplit(".", 1)[0]
    return _host(base) if _host(base) != _host(value) else None


def _remote_url(sub: str, opts: Opts, config: dict[str, str]) -> list[str]:
    """`push-url=URL` for a push to an address other than the repository's own remotes (a URL, or a remote whose URL
    this line set); `config=remote.NAME.url=URL` for a remote this line adds or points elsewhere (a new repository's
    `git remote add origin` is its first remote, and is not counted)."""
    ops = [o.text for o in opts.operands]
    if sub == "remote" and len(ops) >= 3 and ops[0] in ("add", "set-url") and not (ops[0] == "add" and
                                                                                  ops[1] == "origin"):
        return [f"config=remote.{ops[1].lower()}.url={ops[-1]}"]
    if sub == "push":
        remote = ops[0] if ops else "origin"
        url = remote if _URL.match(remote) else config.get(f"remote.{remote.lower()}.url")
        if url:
            return [f"push-url={url}"]
    return []


def git_config(args: list[Val]) -> dict[str, str]:
    """The `-c key=value` pairs of a git command line, keys as git compares them."""
    top = parse(args, SPECS["git"])
    return {gitread.normal_key(k): v for k, _, v in (c.text.partition("=") for c in top.value("-c"))}


def option_values(opts: Opts) -> list[str]:
    return [f"{name}={v.text}" for name, vals in opts.values.items() for v in vals]
