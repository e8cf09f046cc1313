"""`dun service install|uninstall|status`: `dun loop` supervised by systemd (Linux) or launchd (macOS)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from dun.config.loader import dun_config
from dun.core.errors import UsageError
from dun.core.kinds import ExitCode
from dun.service import manage
from dun.service.spec import (
    ServiceSpec,
    default_env_file,
    default_platform,
    env_file_warning,
    loop_argv,
    resolve_path,
    service_name,
)
from dun.store.layout import find_repo


@dataclass
class ServiceOptions:
    path: str | None = None
    platform: str | None = None
    timer: str | None = None
    env_file: str | None = None
    log_file: str | None = None
    loop_args: tuple[str, ...] = ()
    enable: bool = True
    dry_run: bool = False


def say(text: str) -> None:
    sys.stdout.write(text + "\n")


def check_loop_args(loop_cmd: click.Command, args: tuple[str, ...]) -> None:
    """Parse them as `dun loop` would, so a typo fails now rather than in the service at 2 a.m."""
    try:
        ctx = loop_cmd.make_context("dun loop", list(args), resilient_parsing=False)
    except click.ClickException as exc:
        raise UsageError(f"loop arguments: {exc.format_message()}") from None
    if ctx.params.get("path") or ctx.params.get("legacy_path"):
        raise UsageError("give the repository with -C PATH, not among the loop arguments")
    if ctx.params.get("dry_run"):
        raise UsageError("a service runs the loop for real; leave out --dry-run")


def build_spec(opts: ServiceOptions) -> tuple[ServiceSpec, str]:
    root = find_repo(opts.path).root
    platform = opts.platform or default_platform()
    configured = dun_config(root).settings.service.env_file
    env_file = resolve_path(opts.env_file, Path.cwd()) if opts.env_file else (
        resolve_path(configured, root) if configured else default_env_file())
    log_file = resolve_path(opts.log_file, Path.cwd()) if opts.log_file else None
    if log_file is None and platform == "launchd":  # launchd has no journal: always a file
        from dun.service.launchd import default_log

        log_file = default_log(service_name(root))
    spec = ServiceSpec(name=service_name(root), root=root, argv=loop_argv(root, list(opts.loop_args)),
                       env_file=env_file, log_file=log_file, timer=opts.timer)
    return spec, platform


def run_install(opts: ServiceOptions) -> int:
    spec, platform = build_spec(opts)
    version = None
    if platform == "systemd":
        from dun.service.systemd import systemd_version

        version = systemd_version()
    plan = manage.install_plan(spec, platform, version)
    if opts.dry_run:
        sys.stdout.write(manage.show(plan))
        return ExitCode.OK
    if spec.log_file is not None:
        spec.log_file.parent.mkdir(parents=True, exist_ok=True)
    reinstall = platform == "systemd" and bool(manage.installed_files(spec.name, platform))
    manage.apply(plan, opts.enable and manage.can_manage(platform), say)
    if reinstall:
        say(f"a loop already running keeps its old settings until `systemctl --user restart {spec.name}.service`")
    if not spec.env_file.exists():
        say(f"API keys: put KEY=value lines in {spec.env_file} (chmod 600); it is read at each start")
    elif warning := env_file_warning(spec.env_file):
        say(f"warning: {warning}")
    say(f"logs: {manage.logs_hint(spec.name, platform)}")
    if platform == "systemd":
        say("to run without a login session and start at boot: loginctl enable-linger $USER")
    return ExitCode.OK


def run_uninstall(opts: ServiceOptions) -> int:
    root = find_repo(opts.path).root
    platform = opts.platform or default_platform()
    name = service_name(root)
    plan = manage.uninstall_plan(name, platform)
    if not plan.remove:
        say(f"{name}: not installed, nothing to remove")
        return ExitCode.OK
    if opts.dry_run:
        sys.stdout.write(manage.show(plan))
        return ExitCode.OK
    manage.apply(plan, opts.enable and manage.can_manage(platform), say)
    return ExitCode.OK


def run_status(opts: ServiceOptions, as_json: bool) -> int:
    """Exit 0 when the service is installed, 1 when it is not."""
    root = find_repo(opts.path).root
    platform = opts.platform or default_platform()
    info = manage.status(service_name(root), platform, root)
    if as_json:
        sys.stdout.write(json.dumps(info, indent=2) + "\n")
        return ExitCode.OK if info["installed"] else ExitCode.WORK_REMAINS
    if not info["installed"]:
        say(f"{info['name']} ({platform}): not installed (`dun service install` installs it)")
        return ExitCode.WORK_REMAINS
    lines = [f"{info['name']} ({platform})", *(f"  file:   {f}" for f in info["files"])]
    lines.append(f"  timer:  {info['timer'] or 'none (runs continuously)'}")
    sup = info["supervisor"]
    if sup is None:
        lines.append("  state:  unknown (the supervisor is not reachable from here)")
    elif platform == "systemd":
        lines.append(f"  state:  {sup.get('ActiveState', '?')} ({sup.get('SubState', '?')}), last exit "
                     f"{sup.get('ExecMainStatus', '?')}, {sup.get('NRestarts', '0')} restart(s)")
    else:
        lines.append(f"  state:  {sup.get('state', '?')}, last exit {sup.get('last exit code', '?')}")
    loop = info["loop"]
    if loop is None:
        lines.append("  loop:   has not run yet")
    else:
        running = f"running (pid {info['loop_pid']})" if info["loop_pid"] else loop["status"]
        reason = f", {loop['stop_reason']}" if loop.get("stop_reason") else ""
        lines.append(f"  loop:   {running}{reason}, iteration {loop['iteration']}, ${loop['cost_usd_total']:.4f}")
    lines.append(f"  logs:   {info['logs']}")
    say("\n".join(lines))
    return ExitCode.OK
