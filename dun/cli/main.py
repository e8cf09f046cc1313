"""The click layer: parse flags, call a command function, map its result or exception to an exit code.

Heavy modules are imported inside the commands so `dun --version` stays fast.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from dun import __version__
from dun.cli.conventions import AgentOption, SectionedGroup, repo_option

if TYPE_CHECKING:
    from dun.core.snapshot import Early


class FiniteFloat(click.FloatRange):
    """A FloatRange that also refuses nan and the infinities, which compare false with every bound."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        number = float(super().convert(value, param, ctx))
        if not math.isfinite(number) or abs(number) > 1e9:
            self.fail(f"{value!r} is not a finite number up to 1e9", param, ctx)
        return number


_F = TypeVar("_F", bound=Callable[..., Any])
PATH_ARG = repo_option(positional=True)  # `-C PATH`; `dun CMD PATH`, the spelling before -C, still works
REPO_OPTION = repo_option()


class _WithPluginCommands(SectionedGroup):
    """dun's own commands, then those plugins add (`dun_commands`): the plugin manager is built only for a name that
    is not dun's own or for the listing in `--help`, so no built-in command pays for it."""

    def plugin_commands(self, ctx: click.Context) -> dict[str, click.Command]:
        """The plugins' commands, found once per invocation (kept in the root context, not in this module-wide
        group, so that a plugin installed since the last call in one process is seen)."""
        meta = ctx.find_root().meta
        if "dun.plugin_commands" not in meta:
            from dun.core.errors import ConfigError
            from dun.engine.manager import make_manager, owner

            pm = make_manager(agents=False)
            found: dict[str, click.Command] = {}
            owners: dict[str, str] = {}
            for impl in pm.hook.dun_commands.get_hookimpls():  # registration order: dun's own first
                for command in cast(list[click.Command], impl.function() or []):
                    who, name = owner(pm, impl.plugin), command.name or ""
                    if name in self.commands or name in found:
                        raise ConfigError(f"command '{name}' is declared by both {owners.get(name, 'dun')} and {who}")
                    found[name], owners[name] = command, who
            meta["dun.plugin_commands"] = found
        return cast(dict[str, click.Command], meta["dun.plugin_commands"])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return super().get_command(ctx, cmd_name) or self.plugin_commands(ctx).get(cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        from dun.core.errors import ConfigError

        try:
            added = self.plugin_commands(ctx)
        except ConfigError as exc:  # --help still lists dun's own commands; running a plugin's says why not
            sys.stderr.write(f"dun: plugin commands not listed: {exc.errors[0] if exc.errors else exc}\n")
            added = {}
        return sorted({*super().list_commands(ctx), *added})


@click.group(cls=_WithPluginCommands, context_settings={"help_option_names": ["-h", "--help"],
                                                       "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="dun")
def cli() -> None:
    """dun finds the outstanding work in a repository and drives a coding agent until it is done.

    Every command takes -C PATH: the repository (default: the one holding the current directory)."""


def _flags(name: str) -> Callable[[_F], _F]:
    """The options of `dun NAME` from their table (dun/cli/flags.py), which dun/entry.py also reads."""
    from dun.cli.flags import TABLES

    def add(command: Any) -> object:
        for flag in reversed(TABLES[name]):
            kwargs: dict[str, Any] = {"help": flag.help or None, "metavar": flag.metavar}
            if flag.takes == "flag":
                kwargs["is_flag"] = True
            elif flag.takes == "many":
                kwargs["multiple"] = True
            elif flag.minimum is not None:
                kwargs["type"] = click.IntRange(min=flag.minimum)
            elif flag.integer:
                kwargs["type"] = int
            elif flag.choices:
                kwargs["type"] = click.Choice(list(flag.choices))
                if flag.default is not None:
                    kwargs.update(default=flag.default, show_default=True)
            elif flag.file:
                kwargs["type"] = click.Path(dir_okay=False)
            command = click.option(*flag.names, flag.dest, **kwargs)(command)
        return command

    return cast("Callable[[_F], _F]", add)


@cli.command("check")
@PATH_ARG
@_flags("check")
def check_cmd(path: str | None, **options: Any) -> None:
    """Run the checks and report outstanding work. Exit 0: nothing actionable; 1: work remains."""
    from dun.cli.commands.check import CheckOptions, run_check

    options.update(only=list(options["only"]), skip=list(options["skip"]))
    _exit(run_check(CheckOptions(path=path, **options), _early()))


@cli.command("iterate")
@PATH_ARG
@_flags("iterate")
def iterate_cmd(path: str | None, **options: Any) -> None:
    """Print the prompt for one agent iteration: every actionable item, prioritized, with the status block."""
    from dun.cli.commands.iterate import IterateOptions, run_iterate

    _exit(run_iterate(IterateOptions(path=path, **options), _early()))


@cli.command("respond")
@click.argument("source", required=False, metavar="[-]")
@click.option("--file", "file", type=click.Path(dir_okay=False), help="Read the answer from FILE.")
@click.option("--iteration", type=click.IntRange(min=1),
              help="Also record it in .dun/logs/iteration-N.json; with --decide: the iteration `--before` opened.")
@REPO_OPTION
@click.option("--decide", is_flag=True, help="Run the loop's engine one step (for scripts/dun-loop.sh): exit 0 "
              "go/continue, 10 wait, 20 complete, 21 stopped.")
@click.option("--before", is_flag=True, help="With --decide: the step before an agent call (prints go N).")
@click.option("--exit-code", type=int, help="With --decide: the agent's exit code (124: timed out).")
def respond_cmd(source: str | None, file: str | None, iteration: int | None, path: str | None, decide: bool,
                before: bool, exit_code: int | None) -> None:
    """Parse an agent's answer (text, or an agent CLI's JSON or JSONL events). Exit 0: block parsed; 4: no valid
    block."""
    from dun.cli.commands.respond import run_respond

    _exit(run_respond(source, file, iteration, path, decide, before, exit_code))


@cli.command("loop")
@PATH_ARG
@click.option("--agent", cls=AgentOption, metavar="NAME", help="The agent: {agents} (default: agent.name). Not with "
              "an agent.command configured for another agent (exit 2).")
@click.option("--model", help="Model passed to the agent (default: agent.model).")
@click.option("--max-iterations", type=click.IntRange(min=1), help="Default: loop.max_iterations (100).")
@click.option("--max-budget-usd", type=FiniteFloat(min=0), help="0 means no cap (default: loop.max_budget_usd).")
@click.option("--iteration-timeout", type=FiniteFloat(min=1), help="Seconds (default: loop.iteration_timeout_s).")
@click.option("--max-calls-per-hour", type=click.IntRange(min=1), help="Default: loop.max_calls_per_hour (100).")
@click.option("--live", is_flag=True,
              help="Stream the agent's events (Claude and Gemini stream-json) into the .out file.")
@click.option("--skip-permissions", is_flag=True, help="Pass the agent CLI's skip-permissions flag for this run only "
              "(agent.skip_permissions): for throwaway machines such as CI runners and pods.")
@click.option("--fresh", is_flag=True, help="Archive the previous run's logs and state, start a new run.")
@click.option("--reset-circuit", is_flag=True, help="Close the circuit breaker before starting.")
@click.option("--dry-run", is_flag=True, help="Print the next prompt and the decision; call no agent.")
@click.option("--worktree", metavar="NAME", help="Run in the git worktree .dun/worktrees/NAME (made when missing), "
              "with its own state, lock and logs.")
@click.option("--branch", metavar="B", help="With --worktree: its branch (default dun/NAME).")
def loop_cmd(path: str | None, agent: str | None, model: str | None, max_iterations: int | None,
             max_budget_usd: float | None, iteration_timeout: float | None, max_calls_per_hour: int | None,
             live: bool, skip_permissions: bool, fresh: bool, reset_circuit: bool, dry_run: bool,
             worktree: str | None, branch: str | None) -> None:
    """Run a fresh agent per iteration until the checks and the agent agree. Exit 0 complete, 1 stopped."""
    from dun.loop.driver import LoopOptions, run_loop

    _exit(run_loop(LoopOptions(path=path, agent=agent, model=model, max_iterations=max_iterations,
                               max_budget_usd=max_budget_usd, iteration_timeout=iteration_timeout,
                               max_calls_per_hour=max_calls_per_hour, fresh=fresh, reset_circuit=reset_circuit,
                               dry_run=dry_run, live=live, skip_permissions=skip_permissions,
                               worktree=worktree, branch=branch)))


@cli.command("status")
@PATH_ARG
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status_cmd(path: str | None, as_json: bool) -> None:
    """The loop's state in a few lines."""
    from dun.cli.commands.runs import run_status

    _exit(run_status(path, as_json))


@cli.command("logs")
@click.argument("number", required=False, type=click.IntRange(min=1), metavar="[N]")
@REPO_OPTION
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--out", is_flag=True, help="The agent's raw output of iteration N.")
@click.option("-f", "--follow", is_flag=True, help="Follow the running loop: each iteration, the agent's output as "
              "it streams, the decisions; until the loop stops.")
def logs_cmd(number: int | None, path: str | None, as_json: bool, out: bool, follow: bool) -> None:
    """List the iterations, or show iteration N; -f follows the running loop."""
    from dun.cli.commands.runs import run_logs

    if follow:
        from dun.cli.commands.watch import run_follow

        if number is not None or as_json or out:
            from dun.core.errors import UsageError

            raise UsageError("-f follows the running loop: it takes no N, --json or --out")
        _exit(run_follow(path))
    _exit(run_logs(path, number, as_json, out))


@cli.command("watch")
@click.option("-C", "--path", "path", type=click.Path(file_okay=False), help="Repository whose work trees to show "
              "(default: here); the loops running anywhere on this machine are shown too.")
@click.option("--once", is_flag=True, help="Print the view once and exit (also when stdout is not a terminal).")
@click.option("--store", "store_url", metavar="URL", help="Also the other machines' loops of this fleet store "
              "(default: $DUN_FLEET_STORE, else fleet.store when it is not local).")
def watch_cmd(path: str | None, once: bool, store_url: str | None) -> None:
    """Every loop on this machine, live: iteration, agent time, its output as it streams, boxes, cost, decisions,
    waits; with a fleet store, the other machines' loops too. q or Ctrl-C quits."""
    from dun.cli.commands.watch import run_watch

    _exit(run_watch(path, once, store_url=store_url))


@cli.command("stop")
@PATH_ARG
@click.option("--now", is_flag=True, help="Stop the agent at once instead of after the current iteration.")
def stop_cmd(path: str | None, now: bool) -> None:
    """Ask a running loop to stop (creates .dun/STOP)."""
    from dun.cli.commands.runs import run_stop

    _exit(run_stop(path, now))


@cli.command("guard")
@REPO_OPTION
def guard_cmd(path: str | None) -> None:
    """Claude Code PreToolUse hook: deny irreversible or out-of-bounds tool calls (event JSON on stdin, exit 0).
    The repository defaults to CLAUDE_PROJECT_DIR, else the event's cwd."""
    from dun.guard.hook import main as guard_main

    _exit(guard_main(repo=path))


@cli.group("plugins")
def plugins_group() -> None:
    """Inspect and validate plugins."""


@plugins_group.command("list")
@PATH_ARG
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def plugins_list(path: str | None, as_json: bool) -> None:
    """Show every Python plugin (source, hooks) and YAML manifest (layer, file, checks)."""
    from dun.cli.commands.plugins import run_list

    _exit(run_list(path, as_json))


@plugins_group.command("validate")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@REPO_OPTION
def plugins_validate(files: tuple[str, ...], path: str | None) -> None:
    """Validate manifest FILES with the validator `dun check` uses. Exit 2 when any is invalid. With -C, FILES
    are relative to PATH."""
    from dun.cli.commands.plugins import run_validate

    _exit(run_validate([os.path.join(path, f) if path else f for f in files]))


@cli.command("explain")
@click.argument("check_id", metavar="CHECK")
@REPO_OPTION
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def explain_cmd(check_id: str, path: str | None, as_json: bool) -> None:
    """Print a check's definition and where it came from."""
    from dun.cli.commands.explain import run_explain

    _exit(run_explain(check_id, path, as_json))


@cli.group("config")
def config_group() -> None:
    """Inspect the configuration."""


@config_group.command("show")
@PATH_ARG
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--toml", "as_toml", is_flag=True, help="As a [tool.dun] table for pyproject.toml.")
def config_show(path: str | None, as_json: bool, as_toml: bool) -> None:
    """Print the merged config: every key, its value, and whether it is the default."""
    from dun.cli.commands.config_cmd import run_show

    _exit(run_show(path, as_json, as_toml))


@config_group.command("get")
@click.argument("key")
@REPO_OPTION
def config_get(key: str, path: str | None) -> None:
    """Print one value (KEY as section.name), for scripts."""
    from dun.cli.commands.config_cmd import run_get

    _exit(run_get(key, path))


@cli.command("init")
@PATH_ARG
@click.option("--force", is_flag=True, help="Overwrite existing files.")
@click.option("--ci", type=click.Choice(["github", "github-matrix"]),
              help="Write a GitHub Actions workflow instead: dun check on push (github), or one loop per dun/* "
                   "branch (github-matrix).")
@click.option("--schedule", metavar="CRON", help="With --ci github: add a scheduled `dun loop` job opening a pull "
              "request; with github-matrix: when it runs (default '0 2 * * *').")
@click.option("--budget", type=FiniteFloat(min=0), default=5.0, show_default=True,
              help="--max-budget-usd of each loop job.")
@click.option("--parallel", type=click.IntRange(min=1), default=2, show_default=True,
              help="github-matrix: jobs at once (max-parallel).")
@click.option("--pip-spec", "spec", metavar="SPEC", help="With --ci: how the workflow installs dun (default: "
              "dun-loop==THIS_VERSION; e.g. a wheel's path or 'dun-loop @ git+URL@TAG').")
@click.option("--agents-md", is_flag=True, help="Also write the dun section of AGENTS.md (how agents use dun).")
@click.option("--mission", metavar="NAME", help="MISSION.md from a mission template (implementation, research, "
              "survey, deepdive, tests, docs, or your own) and its checks in .dun/plugins/mission-NAME.yaml.")
@click.option("--mission-dir", type=click.Path(file_okay=False), help="With --mission: your own templates "
              "directory, searched first (default: missions.dir, then ~/.config/dun/missions/).")
@click.option("--k8s", is_flag=True, help="Write Kubernetes manifests instead: this repository's loop as a Job (a "
              "CronJob with --schedule), its state on a volume, in k8s/.")
@click.option("--image", metavar="IMAGE", help="With --k8s: the container image (default: dun:VERSION, built from "
              "dun's Containerfile).")
def init_cmd(path: str | None, force: bool, ci: str | None, schedule: str | None, budget: float,
             parallel: int, spec: str | None, agents_md: bool, mission: str | None, mission_dir: str | None,
             k8s: bool, image: str | None) -> None:
    """Scaffold .dun/config.yaml, an example plugin and MISSION.md (or, with --ci, a CI workflow; with --k8s,
    Kubernetes manifests)."""
    from dun.core.errors import UsageError

    if k8s:
        from dun.cli.commands.init_k8s import run_init_k8s

        if ci is not None or mission is not None:
            raise UsageError("--k8s writes the manifests only: without --ci or --mission")
        _exit(run_init_k8s(path, force, schedule, budget, image))
    if image is not None:
        raise UsageError("--image goes with --k8s")
    from dun.cli.commands.init import run_init

    _exit(run_init(path, force, ci, schedule, budget, parallel, agents_md, mission, mission_dir, spec))


PLATFORM_OPT = click.option("--platform", type=click.Choice(["systemd", "launchd"]),
                            help="Default: launchd on macOS, systemd elsewhere.")


@cli.group("service")
def service_group() -> None:
    """Run `dun loop` under systemd (a user unit) or launchd, restarted by exit code."""


@service_group.command("install", context_settings={"ignore_unknown_options": True})
@REPO_OPTION
@PLATFORM_OPT
@click.option("--timer", metavar="CALENDAR", help="Start on a schedule (systemd OnCalendar, e.g. daily or 02:00).")
@click.option("--env-file", type=click.Path(dir_okay=False), help="KEY=value file with API keys (default: "
              "service.env_file, else ~/.config/dun/service.env).")
@click.option("--log-file", type=click.Path(dir_okay=False), help="Append output here instead of the journal.")
@click.option("--no-enable", is_flag=True, help="Write the files; print the systemctl/launchctl commands instead.")
@click.option("--dry-run", is_flag=True, help="Print the files and commands; write nothing.")
@click.argument("loop_args", nargs=-1, type=click.UNPROCESSED, metavar="[-- LOOP_ARGS...]")
def service_install(path: str | None, platform: str | None, timer: str | None, env_file: str | None,
                    log_file: str | None, no_enable: bool, dry_run: bool, loop_args: tuple[str, ...]) -> None:
    """Write and enable the unit (or plist) running `dun loop LOOP_ARGS` in the repository."""
    from dun.cli.commands.service import ServiceOptions, check_loop_args, run_install

    check_loop_args(loop_cmd, loop_args)  # parsed as `dun loop` would: a typo fails now, not at 2 a.m.
    _exit(run_install(ServiceOptions(path=path, platform=platform, timer=timer, env_file=env_file,
                                     log_file=log_file, loop_args=loop_args, enable=not no_enable, dry_run=dry_run)))


@service_group.command("uninstall")
@REPO_OPTION
@PLATFORM_OPT
@click.option("--no-enable", is_flag=True, help="Remove the files; print the systemctl/launchctl commands instead.")
@click.option("--dry-run", is_flag=True, help="Print what would be removed; remove nothing.")
def service_uninstall(path: str | None, platform: str | None, no_enable: bool, dry_run: bool) -> None:
    """Stop and disable the repository's service and remove its files."""
    from dun.cli.commands.service import ServiceOptions, run_uninstall

    _exit(run_uninstall(ServiceOptions(path=path, platform=platform, enable=not no_enable, dry_run=dry_run)))


@service_group.command("status")
@REPO_OPTION
@PLATFORM_OPT
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def service_status(path: str | None, platform: str | None, as_json: bool) -> None:
    """The repository's service: files, supervisor state, the loop. Exit 1 when not installed."""
    from dun.cli.commands.service import ServiceOptions, run_status

    _exit(run_status(ServiceOptions(path=path, platform=platform), as_json))


@cli.group("fleet")
def fleet_group() -> None:
    """Several loops: one per git worktree of a repository, and every loop of the fleet store."""


@fleet_group.command("status")
@PATH_ARG
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--store", "store_url", metavar="URL",
              help="The fleet store to ask (default: $DUN_FLEET_STORE, else fleet.store); works outside a repository.")
def fleet_status_cmd(path: str | None, as_json: bool, store_url: str | None) -> None:
    """Every loop of the repository (each worktree's state and lock), every loop of the fleet store (stale
    heartbeats marked) and the limits their agents share. Exit 1 when the fleet store cannot be reached."""
    from dun.cli.commands.fleet import run_fleet_status

    _exit(run_fleet_status(path, as_json, store_url))


@cli.group("history", invoke_without_command=True)
@REPO_OPTION
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def history_group(ctx: click.Context, path: str | None, as_json: bool) -> None:
    """List the runs recorded in .dun/history.db (caught up with the logs first)."""
    ctx.obj = path  # `dun history -C DIR rebuild` works as well as `dun history rebuild -C DIR`
    if ctx.invoked_subcommand is None:
        from dun.cli.commands.history import run_history

        _exit(run_history(path, as_json))


@history_group.command("rebuild")
@REPO_OPTION
@click.pass_context
def history_rebuild(ctx: click.Context, path: str | None) -> None:
    """Recreate .dun/history.db from the JSON logs (an unreadable database is kept aside)."""
    from dun.cli.commands.history import run_rebuild

    _exit(run_rebuild(path or ctx.obj))


@cli.command("hints")
@click.argument("files", nargs=-1, metavar="FILE...")
@REPO_OPTION
@click.option("-n", "--limit", type=click.IntRange(min=1, max=1000), default=10, show_default=True,
              help="Hints shown per FILE.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--rebuild", is_flag=True, help="Build the index again from history and the logs.")
def hints_cmd(files: tuple[str, ...], path: str | None, limit: int, as_json: bool, rebuild: bool) -> None:
    """Files that most often change with FILE (git history and the loop's iterations). Exit 0: hints; 1: none."""
    from dun.cli.commands.hints import run_hints

    _exit(run_hints(list(files), path, limit, as_json, rebuild))


@cli.command("report")
@REPO_OPTION
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Where (default .dun/report.html).")
@click.option("--runs", type=click.IntRange(min=1), default=1, show_default=True, help="The last N runs.")
@click.option("--html", is_flag=True, hidden=True)  # the spelling from when `report` also meant `summary`
@click.option("--latest", is_flag=True, hidden=True)  # deprecated: `dun summary` then `dun ack`
def report_cmd(path: str | None, output: str | None, runs: int, html: bool, latest: bool) -> None:
    """Write the HTML report of the last run: what happened, why it stopped and the command that goes on, the
    commits, the boxes ticked, every iteration (prompt, answer, log) and the plots. One file, no network."""
    from dun.cli.commands.report import run_latest, run_report

    if latest:
        _exit(run_latest(path, html or output is not None))
    _exit(run_report(path, output, runs))


@cli.command("summary")
@REPO_OPTION
def summary_cmd(path: str | None) -> None:
    """What happened since the status reports you acknowledged: stops, problems, review items, work done, in at
    most 60 lines. Changes nothing (`dun ack` marks it read)."""
    from dun.cli.commands.report import run_summary

    _exit(run_summary(path))


@cli.command("ack")
@click.argument("item", required=False, metavar="[ID]")
@REPO_OPTION
def ack_cmd(item: str | None, path: str | None) -> None:
    """Acknowledge: the status reports up to now (the next `dun summary` starts after them), or review item ID
    (seen: it no longer needs a person; the agent is still told about it)."""
    from dun.cli.commands.report import run_ack

    _exit(run_ack(path, item))


@cli.group("review", invoke_without_command=True)
@REPO_OPTION
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--all", "show_all", is_flag=True, help="Dismissed items too.")
@click.pass_context
def review_group(ctx: click.Context, path: str | None, as_json: bool, show_all: bool) -> None:
    """Review items from the deficiency detector (`dun ack ID`: seen). Exit 1 while any is open."""
    ctx.obj = path
    if ctx.invoked_subcommand is None:
        from dun.cli.commands.review import run_review

        _exit(run_review(path, as_json, show_all))


@review_group.command("ack", hidden=True)
@click.argument("item", metavar="ID")
@REPO_OPTION
@click.pass_context
def review_ack(ctx: click.Context, item: str, path: str | None) -> None:
    """Deprecated spelling of `dun ack ID`."""
    from dun.cli.commands.report import run_ack

    sys.stderr.write("dun: `dun review ack ID` is now `dun ack ID` (the old spelling goes in a later version)\n")
    _exit(run_ack(path or ctx.obj, item))


@review_group.command("dismiss")
@click.argument("item", metavar="ID")
@REPO_OPTION
@click.pass_context
def review_dismiss(ctx: click.Context, item: str, path: str | None) -> None:
    """Not a problem: the item is shown nowhere any more."""
    from dun.cli.commands.review import run_decide

    _exit(run_decide(path or ctx.obj, item, "dismissed"))


@cli.command("list")
@PATH_ARG
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def list_cmd(path: str | None, fmt: str) -> None:
    """List every check, whether it applies here, and its level when failing; runs nothing."""
    from dun.cli.commands.list import run_list_checks

    _exit(run_list_checks(path, fmt))


@cli.command("task")
@click.argument("task_id", metavar="ID")
@REPO_OPTION
@click.option("--prompt", is_flag=True, help="Print the task as a focused agent prompt.")
def task_cmd(task_id: str, path: str | None, prompt: bool) -> None:
    """Run one check and show it, or one item (CHECK#N, CHECK@FILE:LINE). Exit 0: done; 1: still outstanding."""
    from dun.cli.commands.task import run_task

    _exit(run_task(task_id, path, prompt))


@cli.command("sandbox", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("args", nargs=-1, type=click.UNPROCESSED,
                metavar="[--loop] [--mode M] [--no-network] [--writable P]... [-C DIR] -- CMD")
def sandbox_cmd(args: tuple[str, ...]) -> None:
    """Run CMD in the agent's OS sandbox (bubblewrap): for scripts/dun-loop.sh and other drivers.

    \b
      --loop          As `dun loop` runs its agent: the config's mode, network and writable paths;
                      the guard wired into claude.
      --mode M        auto, bubblewrap or off (default: auto; with --loop, loop.sandbox).
      --no-network    Loopback only.
      --writable P    Another path CMD may write (repeatable).
      -C, --repo DIR  The repository (default: the git top level of the current directory).
    """
    from dun.sandbox import main as sandbox_main

    _exit(sandbox_main(list(args)))


@cli.command("doctor")
@PATH_ARG
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
def doctor_cmd(path: str | None, as_json: bool) -> None:
    """Agent CLIs (versions against the tested ones, credentials), git, Python, coverage and the checks' programs.
    Exit 1 when the configured agent cannot run."""
    from dun.cli.commands.doctor import run_doctor

    _exit(run_doctor(path, as_json))


def _exit(code: int) -> None:
    sys.exit(code)


def main(argv: list[str] | None = None, entry: click.Command = cli, early: Early | None = None) -> int:
    """Console-script entry point: click reads the command line, `dun.cli.errors.guarded` maps what it raises.
    `early`: git's look started by dun/entry.py for `dun check` or `dun iterate` here (the commands' context
    object)."""
    from dun.cli.errors import guarded

    return guarded(lambda: entry.main(args=argv, prog_name="dun", standalone_mode=False, obj=early))


def _early() -> Early | None:
    """What `main` was given as `early`, for the command being run."""
    return cast("Early | None", click.get_current_context().obj)


if __name__ == "__main__":
    sys.exit(main())
