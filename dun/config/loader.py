"""dun's configuration: every key declared with type, default and description; loaded from
`.dun/config.yaml` or `[tool.dun]` in `pyproject.toml`."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dun.config.schema import Field, Validator, plain, type_name
from dun.config.yamlio import MAX_YAML_BYTES, load_yaml_file
from dun.core.errors import ConfigError
from dun.core.kinds import NotifyEvent
from dun.core.textfiles import read_bytes
from dun.store import layout

if TYPE_CHECKING:
    from dun.config.sections import Settings
    from dun.core.redact import Redactor

CONFIG_FIELDS: dict[str, Field] = {
    "check": Field("map", "How `dun check` runs.", fields={
        "jobs": Field("int", "Checks run at once (independent checks run concurrently).", default=8, minimum=1),
        "timeout_s": Field("float", "Default per-check timeout in seconds.", default=300.0, minimum=0.1),
        "warn_is_actionable": Field(
            "bool", "Treat `warn` results as actionable (exit code 1), as `--strict` does.", default=False),
        "format": Field("str", "Default output format of `dun check`.", default="text"),
        "overrides": Field("map", "Per check id, `inputs:` added to what the check declares, and `ttl:` or "
                                  "`flaky:` set, as a plugin manifest's check takes them; for any check, built-in "
                                  "ones included.", default={}),
    }),
    "iterate": Field("map", "How `dun iterate` renders the prompt.", fields={
        "mission_file": Field("str", "The mission shown first in the prompt, relative to the root.",
                              default="MISSION.md"),
        "max_prompt_chars": Field("int", "Prompt size bound; lower-ranked items fold into counts beyond it.",
                                  default=32000, minimum=2000),
        "automation": Field("str", "Default automation mode.", default="auto",
                            choices=("manual", "plan", "auto", "yolo")),
        "items_per_check": Field("int", "Items listed per check before the rest fold into a count.", default=20,
                                 minimum=1),
    }),
    "missions": Field("map", "Mission templates (`dun init --mission NAME`).", fields={
        "dir": Field("str", "Your own mission templates (a directory NAME/ per template with MISSION.md and "
                            "optionally checks.yaml), relative to the root, `~` expanded; searched before "
                            "~/.config/dun/missions/ and dun's.", default=None),
    }),
    "hints": Field("map", "Co-change hints: files that usually change with the ones the work list names, learned "
                          "from git history and the loop's iterations (`dun hints`).", fields={
        "in_prompt": Field("bool", "Show the hints in `dun iterate`'s prompt.", default=True),
        "per_file": Field("int", "Hints shown in the prompt for each file of the work list.", default=3, minimum=1),
        "max_chars": Field("int", "Size bound of the prompt's hints section (it is also the first cut when the "
                                  "prompt is over max_prompt_chars).", default=1500, minimum=200),
        "history": Field("int", "The newest commits the index is built from.", default=5000, minimum=1),
        "max_commit_files": Field("int", "A commit changing more files than this links none of them (mass renames, "
                                         "formatting).", default=30, minimum=2),
        "half_life": Field("int", "Commits (or iterations) after which a link counts half.", default=1000,
                           minimum=1),
    }),
    "papers": Field("map", "The paper watch (`dun papers`): feeds polled into .dun/papers.jsonl.", fields={
        "feeds": Field("list", "Feed URLs `dun papers poll` reads: RSS or Atom (e.g. arXiv's per-category feeds) "
                               "or a JSON search API answering a list of papers.", default=[],
                       item=Field("str", "URL")),
        "timeout_s": Field("float", "Seconds one feed may take, connecting and reading together.", default=20.0,
                           minimum=0.1),
        "max_bytes": Field("int", "A feed larger than this many bytes is an error, not read further.",
                           default=5 * 1024 * 1024, minimum=1024),
        "max_entries": Field("int", "Entries kept from one feed (the first ones, as the feed orders them).",
                             default=200, minimum=1),
        "max_papers": Field("int", "Papers kept in .dun/papers.jsonl; beyond it the oldest handled ones go first.",
                            default=5000, minimum=10),
        "notes_dir": Field("str", "Where a paper's triage note goes (NOTES_DIR/SLUG.md, relative to the root): "
                                  "with one, the `papers-unread` check counts the paper as read.", default="papers"),
    }),
    "loop": Field("map", "Limits and pacing of `dun loop`.", fields={
        "sandbox": Field("str", "Run the agent in an OS sandbox (docs/protection.md): auto uses bubblewrap where it "
                                "can run and says so when it cannot; bubblewrap requires it (exit 2 when it cannot "
                                "run); off runs the agent unconfined.", default="auto",
                         choices=("auto", "bubblewrap", "off")),
        "max_iterations": Field("int", "Stop after this many iterations in a run (max_iterations).", default=100,
                                minimum=1),
        "max_duration_h": Field("float", "Stop after this many hours (max_duration).", default=12.0, minimum=0.001),
        "max_budget_usd": Field("float", "Total spend cap from the agents' real costs; 0 means no cap (budget).",
                                default=50.0, minimum=0),
        "budget_per_iteration_usd": Field("float", "Per-iteration cap, passed to the agent where it supports one.",
                                          default=5.0, minimum=0),
        "iteration_timeout_s": Field("float", "Kill the agent's process group after this long.", default=1800.0,
                                     minimum=1),
        "kill_grace_s": Field("float", "Seconds between SIGTERM and SIGKILL on timeout.", default=10.0, minimum=0),
        "cooldown_s": Field("float", "Pause between iterations.", default=5.0, minimum=0),
        "max_calls_per_hour": Field("int", "Agent calls allowed in any rolling hour.", default=100, minimum=1),
        "usage_limit_wait_min": Field("float", "Wait after a rate or usage limit when the agent gave no reset time.",
                                      default=60.0, minimum=0),
        "confirm_iterations": Field("int", "Confirmation iterations when checks pass but the agent disagrees.",
                                    default=2, minimum=0),
        "error_threshold": Field("int", "Stop after this many failed iterations in total (error_threshold).",
                                 default=10, minimum=1),
        "max_output_mb": Field("float", "The agent's stdout and stderr kept per iteration, each; beyond it only the "
                                        "last part is kept (the status block is at the end).", default=50.0,
                               minimum=0.1),
    }),
    "circuit": Field("map", "The circuit breaker of `dun loop`.", fields={
        "half_open_after": Field("int", "No-progress iterations before HALF_OPEN.", default=2, minimum=1),
        "no_progress_limit": Field("int", "No-progress iterations before OPEN.", default=3, minimum=1),
        "same_error_limit": Field("int", "Iterations with the same normalized error before OPEN.", default=5,
                                  minimum=1),
        "permission_denial_limit": Field("int", "Iterations in a row with permission denials before OPEN.",
                                         default=2, minimum=1),
        "cooldown_min": Field("float", "Minutes after which an OPEN circuit becomes HALF_OPEN on a later start.",
                              default=30.0, minimum=0),
        "discrepancy_limit": Field("int", "Iterations in a row with unverified claims before OPEN (untrustworthy).",
                                   default=3, minimum=1),
        "oscillation_limit": Field("int", "Oscillations before OPEN (oscillation).", default=2, minimum=1),
    }),
    "trust": Field("map", "What dun verifies about the agent, and what it does about it.", fields={
        "on_task_tamper": Field("str", "A mission box removed, reworded or ticked without evidence: restore it "
                                       "(and commit as dun), flag it, or stop the run.", default="restore",
                                choices=("restore", "flag", "stop")),
        "on_checker_tamper": Field("str", "dun's config, manifests, gates, coverage settings or protected paths "
                                          "changed: revert, flag, or stop.", default="revert",
                                   choices=("revert", "flag", "stop")),
        "protected": Field("list", "More globs whose files the agent must not change or delete (e.g. tests/**); "
                                   "adding files there is allowed.", default=[], item=Field("str", "glob")),
        "oscillation_window": Field("int", "Iterations back in which a repeated work tree is an oscillation.",
                                    default=6, minimum=1),
    }),
    "agent": Field("map", "Which agent CLI `dun loop` runs, and how.", fields={
        "name": Field("str", "Adapter: claude, codex, gemini, opencode, pi, aider or command.", default="claude"),
        "command": Field("list", "The command line of the `command` adapter (or the CLI binary to use instead of the "
                                 "adapter's default).", default=[], item=Field("str", "argument"), scalar_ok=True),
        "prompt_via": Field("str", "`command` adapter: give the prompt on stdin, as a file path ({prompt_file} in "
                                   "the command), or as an argument ({prompt}).", default="stdin",
                            choices=("stdin", "file", "arg")),
        "model": Field("str", "Model name passed to the CLI.", default=None),
        "allowed_tools": Field("list", "Claude --allowedTools rules, e.g. 'Bash(git *)'.", default=[],
                               item=Field("str", "rule")),
        "skip_permissions": Field("bool", "Pass the CLI's skip-permissions flag (unattended, sandboxed runs).",
                                  default=False),
        "extra_args": Field("list", "Arguments appended to the agent's command line.", default=[],
                            item=Field("str", "argument")),
        "live": Field("bool", "Stream events (Claude and Gemini stream-json) into the iteration's .out file.",
                      default=False),
        "input_usd_per_mtok": Field("float", "Cost of a million input tokens, for CLIs that report only tokens.",
                                    default=0.0, minimum=0),
        "output_usd_per_mtok": Field("float", "Cost of a million output tokens, for CLIs that report only tokens.",
                                     default=0.0, minimum=0),
    }),
    "sandbox": Field("map", "What the agent's OS sandbox allows besides the repository (loop.sandbox).", fields={
        "writable": Field("list", "More writable paths (`~` expanded; bound only where they exist).", default=[],
                          item=Field("str", "path")),
        "network": Field("bool", "Network inside the sandbox (agents need their API); false leaves only loopback.",
                         default=True),
    }),
    "gate": Field("map", "The review gate: other agents approve or reject each iteration (docs/agents.md).", fields={
        "reviewers": Field("list", "Reviewer agents, `name` or `name:model` (e.g. codex, gemini:gemini-3.8-flash); "
                                   "none: no gate.", default=[], item=Field("str", "reviewer")),
        "when": Field("str", "Review every iteration, or only completions (EXIT_SIGNAL true or a ticked box).",
                      default="completions", choices=("every", "completions")),
        "approvals": Field("int", "Approvals needed of the reviewers (a quorum); 0 means all of them.", default=0,
                           minimum=0),
        "commands": Field("map", "A reviewer's binary by agent name, e.g. {codex: [/opt/codex/bin/codex]}.",
                          default={}),
        "timeout_s": Field("float", "Kill a reviewer after this long.", default=600.0, minimum=1),
        "max_diff_chars": Field("int", "The diff shown to reviewers is cut at this size.", default=40000,
                                minimum=1000),
        "input_usd_per_mtok": Field("float", "A reviewer's input price, for CLIs that report only tokens.",
                                    default=0.0, minimum=0),
        "output_usd_per_mtok": Field("float", "A reviewer's output price, for CLIs that report only tokens.",
                                     default=0.0, minimum=0),
    }),
    "guard": Field("map", "The `dun guard` PreToolUse hook.", fields={
        "enabled": Field("bool", "`dun loop` wires the guard into the claude agent for the run.", default=True),
        "allow": Field("list", "Patterns for commands (or Tool(path) for file tools) the guard allows although a "
                               "built-in rule denies them: a glob over the normalized command, or re:REGEX.",
                       default=[], item=Field("str", "pattern")),
        "deny": Field("list", "Patterns the guard denies in addition to its built-in rules (same syntax; deny wins "
                              "over allow).", default=[], item=Field("str", "pattern")),
    }),
    "service": Field("map", "`dun service`: the loop run by systemd or launchd.", fields={
        "env_file": Field("str", "KEY=value file with the agent's API keys, loaded by the supervisor at each start "
                                 "and never copied into the unit (default: ~/.config/dun/service.env).",
                          default=None),
    }),
    "fleet": Field("map", "Several loops, on one machine or many: worktrees, the limits they share and the "
                          "registry of loops (docs/scale-out.md).", fields={
        "worktrees_dir": Field("str", "Where `dun loop --worktree NAME` creates worktrees, relative to the root.",
                               default=layout.WORKTREES),
        "shared_limits": Field("bool", "Loops of one agent share one hourly call window, pause together on a usage "
                                       "limit and share fleet.budget_usd_per_day (through fleet.store).",
                               default=True),
        "budget_usd_per_day": Field("float", "Spend cap per agent across all loops of the fleet store in any 24 "
                                             "hours; 0 means no cap.", default=0.0, minimum=0),
        "store": Field("str", "Where the shared limits and the registry of loops live: local (a file per agent in "
                              "this machine's state directory) or redis://HOST:PORT/DB for loops on several "
                              "machines (needs `pip install 'dun-loop[fleet]'`). No password here: the agent reads "
                              "this file; give it in $DUN_FLEET_PASSWORD (or the whole URL in $DUN_FLEET_STORE, "
                              "which wins over this key).", default="local"),
        "on_store_lost": Field("str", "When the fleet store cannot be reached: wait for it (asking again every "
                                      "fleet.store_retry_s), or go on under this machine's local limits; either way "
                                      "the loop catches the store up when it is back.", default="wait",
                               choices=("wait", "local")),
        "store_retry_s": Field("float", "Seconds between attempts to reach a lost fleet store.", default=30.0,
                               minimum=0.1),
        "heartbeat_s": Field("float", "How often a loop, waiting or not, writes its record into the registry.",
                             default=30.0, minimum=0.1),
        "stale_after_s": Field("float", "`dun fleet status` marks a running loop stale when its last heartbeat is "
                                        "older than this.", default=300.0, minimum=1),
    }),
    "review": Field("map", "The deficiency detector over the run history, and its review items (docs/history.md).",
                    fields={
        "in_prompt": Field("bool", "Show open and acknowledged review items in the agent's prompt.", default=True),
        "claim_streak": Field("int", "Iterations in a row a check fails while the agent claims it.", default=3,
                              minimum=2),
        "error_repeats": Field("int", "Times the same error signature repeats within error_window_h.", default=3,
                               minimum=2),
        "error_window_h": Field("float", "The window, in hours, of error_repeats (across runs).", default=48.0,
                                minimum=0.01),
        "box_attempts": Field("int", "Iterations a mission box is claimed without being ticked.", default=3,
                              minimum=2),
        "repair_repeats": Field("int", "Iterations in which dun restores or reverts the same file.", default=2,
                                minimum=2),
        "denial_repeats": Field("int", "Denials by the same guard rule.", default=3, minimum=2),
        "cost_factor": Field("float", "An iteration costing more than this times the median of the earlier ones.",
                             default=3.0, minimum=1),
        "cost_min_samples": Field("int", "Earlier iterations with a cost needed before cost_factor applies.",
                                  default=5, minimum=1),
    }),
    "notify": Field("map", "Notifications about a run (docs/history.md).", fields={
        "urls": Field("list", "apprise URLs to notify (needs `pip install 'dun-loop[notify]'`), e.g. "
                              "ntfy://topic or json://host:port/path.", default=[], item=Field("str", "URL")),
        "command": Field("list", "A command run for each notification, the event in DUN_EVENT, DUN_TITLE, "
                                 "DUN_MESSAGE and DUN_NOTIFY_JSON; one string with spaces runs with sh -c.",
                         default=[], item=Field("str", "argument"), scalar_ok=True),
        "events": Field("list", "Events to notify.", default=[str(e) for e in NotifyEvent],
                        item=Field("str", "event", choices=tuple(str(e) for e in NotifyEvent))),
        "budget_fraction": Field("float", "Share of loop.max_budget_usd spent that sends the budget event.",
                                 default=0.8, minimum=0.01),
        "timeout_s": Field("float", "Seconds notify.command may run before it is killed.", default=30.0,
                           minimum=1),
        "interval_min": Field("float", "At most one notification per event kind in this many minutes; the rest "
                                       "go as a digest with the next one (the stop events always go); 0: all.",
                              default=30.0, minimum=0),
    }),
    "secrets": Field("map", "Secrets dun redacts from every file it writes and from the prompt (docs/reliability.md).",
                     fields={
        "patterns": Field("list", "Regular expressions of more secrets to redact, besides the well-known key and "
                                  "token formats.", default=[], item=Field("str", "regex")),
    }),
    "plugins": Field("map", "Which YAML plugin manifests load.", fields={
        "disabled": Field("list", "Manifest ids to ignore, e.g. [go].", default=[], item=Field("str", "id")),
        "dirs": Field("list", "Extra manifest directories, relative to the repo root; loaded after .dun/plugins.",
                      default=[], item=Field("str", "directory")),
    }),
}


@dataclass
class Config:
    """The validated config: its values, where they came from and the fields that describe them."""

    values: dict[str, Any]
    source: str  # where it was read from, or "defaults"
    fields: dict[str, Field] = field(default_factory=dict)

    @cached_property
    def settings(self) -> Settings:
        """dun's sections, typed (dun/config/sections.py), built once on first use."""
        from dun.config.sections import build

        return build(self.values, CONFIG_FIELDS)

    @cached_property
    def redactor(self) -> Redactor:
        """What this command redacts from every file it writes, what it prints and the prompt: the well-known
        formats and `secrets.patterns` (plus secrets learned at run time, `Redactor.add_secret`)."""
        from dun.core.redact import Redactor

        return Redactor(self.values["secrets"]["patterns"])

    def get(self, dotted: str) -> Any:
        """One key, untyped: `dun check` reads its few keys this way, since making the typed sections' classes costs
        it more (a few ms) than all its config reading; every other reader uses `settings`."""
        node: Any = self.values
        for part in dotted.split("."):
            node = node[part]
        return node

    def flat(self) -> list[tuple[str, object, Field]]:
        """Every declared key as (dotted.key, value, field), in declaration order."""
        out: list[tuple[str, object, Field]] = []
        for section, spec in self.fields.items():
            for key, sub in (spec.fields or {}).items():
                out.append((f"{section}.{key}", self.values.get(section, {}).get(key), sub))
        return out


def config_path(root: Path) -> Path:
    return layout.config_path(root)


def _read_raw(root: Path) -> tuple[object, str]:
    yaml_path = config_path(root)
    if yaml_path.exists() or yaml_path.is_symlink():  # a device or a dangling link is an error, not "no config"
        data = load_yaml_file(yaml_path, root)
        return ({} if data is None else data), str(yaml_path)
    pyproject = root / "pyproject.toml"
    if pyproject.exists() or pyproject.is_symlink():
        return _read_pyproject(pyproject, root)
    return {}, "defaults"


def _read_pyproject(pyproject: Path, root: Path) -> tuple[object, str]:
    import tomllib

    from dun.config.tomlpos import key_lines, positioned

    try:
        text = read_bytes(pyproject, MAX_YAML_BYTES, root).decode("utf-8")
        doc = tomllib.loads(text)
    except OSError as exc:
        raise ConfigError(f"{pyproject}: cannot read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{pyproject}: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{pyproject}: nested too deeply") from None
    tool = doc.get("tool")
    if tool is None:
        return {}, "defaults"
    lines = key_lines(text)
    if not isinstance(tool, dict):
        line = lines.get(("tool",), (0, 0))[0] + 1
        raise ConfigError(f"{pyproject}:{line}:1: tool: expected a table, got {type_name(tool)}")
    section = tool.get("dun")
    if section is None:
        return {}, "defaults"
    if not isinstance(section, dict):
        line = lines.get(("tool", "dun"), (0, 0))[0] + 1
        raise ConfigError(f"{pyproject}:{line}:1: tool.dun: expected a table, got {type_name(section)}")
    return positioned(section, lines, ("tool", "dun")), f"{pyproject} [tool.dun]"


def load_config(root: Path, extra_fields: dict[str, Field] | None = None, others_unchecked: bool = False) -> Config:
    """The repository's config, validated against dun's sections and `extra_fields` (the loaded plugins'). With
    `others_unchecked`, a top-level section neither declares is left out unchecked: a command that loads no plugin
    (`dun guard`, `dun respond`, `dun service`, ...) cannot tell a plugin's section from a typo, and must not refuse
    the whole config (its guard rules and secret patterns) for it; `dun check` and `dun loop` still report typos."""
    fields = dict(CONFIG_FIELDS)
    for name, spec in (extra_fields or {}).items():
        if name in fields:
            raise ConfigError(f"config section '{name}' is declared by dun and by a plugin")
        fields[name] = spec
    raw, source = _read_raw(root)
    validator = Validator(source.split(" ")[0])
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}:1:1: the config must be a mapping of sections, got {type_name(raw)}")
    if others_unchecked:
        for name in [k for k in raw if k not in fields]:
            del raw[name]
    values = validator.check_map(raw, {k: _with_defaults(v) for k, v in fields.items()})
    _check_patterns(validator, raw, values)
    _check_overrides(validator, raw, values)
    if validator.errors:
        raise ConfigError(validator.errors)
    return Config(values=plain(values), source=source, fields=fields)


def _check_patterns(validator: Validator, raw: dict[str, Any], values: dict[str, Any]) -> None:
    """`secrets.patterns` are regular expressions: one that does not compile is reported where it is written."""
    import re

    raw_list = (raw.get("secrets") or {}).get("patterns") if isinstance(raw.get("secrets"), dict) else None
    for i, pattern in enumerate((values.get("secrets") or {}).get("patterns") or []):
        if not isinstance(pattern, str):
            continue
        try:
            re.compile(pattern)
        except (re.error, RecursionError, OverflowError) as exc:
            validator.error(raw_list, i, f"secrets.patterns[{i}]", f"not a regular expression: {exc}", value=True)


def _check_overrides(validator: Validator, raw: dict[str, Any], values: dict[str, Any]) -> None:
    """`check.overrides`: each entry as a manifest's check takes `inputs:`, `ttl:` and `flaky:` (only the keys given
    are kept: the catalog applies them, dun/engine/catalog.py)."""
    from dun.config.reuse import OVERRIDE_FIELDS

    section = values.get("check")
    if not isinstance(section, dict) or not section.get("overrides"):
        return
    raw_map = raw["check"]["overrides"]
    checked: dict[str, Any] = {}
    for check_id, entry in raw_map.items():
        path = f"check.overrides.{check_id}"
        if not isinstance(entry, dict):
            validator.error(raw_map, check_id, path, f"expected a mapping, got {type_name(entry)}", value=True)
            continue
        done = validator.check_map(entry, OVERRIDE_FIELDS, path)
        checked[str(check_id)] = {k: v for k, v in done.items() if k in entry}
    section["overrides"] = checked


def _with_defaults(section: Field) -> Field:
    """A section left out of the file still gets every key's default."""
    defaults = {k: f.default for k, f in (section.fields or {}).items()}
    return Field(section.type, section.description, fields=section.fields, default=defaults)


def defaults_only() -> Config:
    return Config(values={k: {n: f.default for n, f in (v.fields or {}).items()} for k, v in CONFIG_FIELDS.items()},
                  source="defaults", fields=dict(CONFIG_FIELDS))


def dun_config(root: Path) -> Config:
    """dun's own sections of the repository's config, for a command that loads no plugin (`load_config`)."""
    return load_config(root, others_unchecked=True)

