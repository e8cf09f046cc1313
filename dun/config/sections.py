"""The config's sections, typed: one frozen dataclass per section, built once per command from the validated values
(`Config.settings`). The schema (`CONFIG_FIELDS` in loader.py) stays the one source of keys, defaults and
documentation: a class here only gives each key its type, and tests/config/test_sections.py fails when the two
differ. A flag overrides a key with `dataclasses.replace` (`Settings.with_flags`), so every reader sees one object.

A list is a tuple here and a map a read-only mapping, so that no reader can change what another reads."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from dun.config.schema import Field

Automation = Literal["manual", "plan", "auto", "yolo"]
SandboxMode = Literal["auto", "bubblewrap", "off"]


@dataclass(frozen=True)
class Check:
    """`check:`, how `dun check` runs."""

    jobs: int
    timeout_s: float
    warn_is_actionable: bool
    format: str
    overrides: Mapping[str, object]  # check id: its `inputs:`, `ttl:`, `flaky:` (dun/engine/catalog.py)


@dataclass(frozen=True)
class Iterate:
    """`iterate:`, how `dun iterate` (and each iteration of `dun loop`) renders the prompt."""

    mission_file: str
    max_prompt_chars: int
    automation: Automation
    items_per_check: int


@dataclass(frozen=True)
class Missions:
    """`missions:`, where `dun init --mission NAME` finds your own templates."""

    dir: str | None


@dataclass(frozen=True)
class Hints:
    """`hints:`, the co-change hints of `dun iterate`'s prompt and of `dun hints` (dun/hints/)."""

    in_prompt: bool
    per_file: int
    max_chars: int
    history: int
    max_commit_files: int
    half_life: int


@dataclass(frozen=True)
class Papers:
    """`papers:`, the paper watch (`dun papers`)."""

    feeds: tuple[str, ...]
    timeout_s: float
    max_bytes: int
    max_entries: int
    max_papers: int
    notes_dir: str


@dataclass(frozen=True)
class Loop:
    """`loop:`, the limits and pacing of `dun loop`."""

    sandbox: SandboxMode
    max_iterations: int
    max_duration_h: float
    max_budget_usd: float
    budget_per_iteration_usd: float
    iteration_timeout_s: float
    kill_grace_s: float
    cooldown_s: float
    max_calls_per_hour: int
    usage_limit_wait_min: float
    confirm_iterations: int
    error_threshold: int
    max_output_mb: float


@dataclass(frozen=True)
class Circuit:
    """`circuit:`, the circuit breaker of `dun loop`."""

    half_open_after: int
    no_progress_limit: int
    same_error_limit: int
    permission_denial_limit: int
    cooldown_min: float
    discrepancy_limit: int
    oscillation_limit: int


@dataclass(frozen=True)
class Trust:
    """`trust:`, what dun verifies about the agent and what it does about it."""

    on_task_tamper: Literal["restore", "flag", "stop"]
    on_checker_tamper: Literal["revert", "flag", "stop"]
    protected: tuple[str, ...]
    oscillation_window: int


@dataclass(frozen=True)
class Agent:
    """`agent:`, which agent CLI `dun loop` runs and how (a reviewer of the gate gets one of its own)."""

    name: str
    command: tuple[str, ...]
    prompt_via: Literal["stdin", "file", "arg"]
    model: str | None
    allowed_tools: tuple[str, ...]
    skip_permissions: bool
    extra_args: tuple[str, ...]
    live: bool
    input_usd_per_mtok: float
    output_usd_per_mtok: float


@dataclass(frozen=True)
class Sandbox:
    """`sandbox:`, what the agent's OS sandbox allows besides the repository."""

    writable: tuple[str, ...]
    network: bool


@dataclass(frozen=True)
class Gate:
    """`gate:`, the review gate."""

    reviewers: tuple[str, ...]
    when: Literal["every", "completions"]
    approvals: int
    commands: Mapping[str, object]  # a reviewer's command line by agent name, checked when the gate is built
    timeout_s: float
    max_diff_chars: int
    input_usd_per_mtok: float
    output_usd_per_mtok: float


@dataclass(frozen=True)
class Guard:
    """`guard:`, the `dun guard` PreToolUse hook."""

    enabled: bool
    allow: tuple[str, ...]
    deny: tuple[str, ...]


@dataclass(frozen=True)
class Service:
    """`service:`, the loop run by systemd or launchd."""

    env_file: str | None


@dataclass(frozen=True)
class Fleet:
    """`fleet:`, several loops on one machine or many (the fleet store)."""

    worktrees_dir: str
    shared_limits: bool
    budget_usd_per_day: float
    store: str
    on_store_lost: Literal["wait", "local"]
    store_retry_s: float
    heartbeat_s: float
    stale_after_s: float


@dataclass(frozen=True)
class Review:
    """`review:`, the deficiency detector over the run history."""

    in_prompt: bool
    claim_streak: int
    error_repeats: int
    error_window_h: float
    box_attempts: int
    repair_repeats: int
    denial_repeats: int
    cost_factor: float
    cost_min_samples: int


@dataclass(frozen=True)
class Notify:
    """`notify:`, notifications about a run."""

    urls: tuple[str, ...]
    command: tuple[str, ...]
    events: tuple[str, ...]
    budget_fraction: float
    timeout_s: float
    interval_min: float


@dataclass(frozen=True)
class Secrets:
    """`secrets:`, more secrets to redact."""

    patterns: tuple[str, ...]


@dataclass(frozen=True)
class Plugins:
    """`plugins:`, which YAML plugin manifests load."""

    disabled: tuple[str, ...]
    dirs: tuple[str, ...]


@dataclass(frozen=True)
class Settings:
    """dun's whole config, typed: one attribute per section of the schema (a plugin's own sections stay in
    `Config.values`, validated by the plugin's schema)."""

    check: Check
    iterate: Iterate
    missions: Missions
    hints: Hints
    papers: Papers
    loop: Loop
    circuit: Circuit
    trust: Trust
    agent: Agent
    sandbox: Sandbox
    gate: Gate
    guard: Guard
    service: Service
    fleet: Fleet
    review: Review
    notify: Notify
    secrets: Secrets
    plugins: Plugins

    def with_flags(self, flags: Mapping[str, object]) -> Settings:
        """These settings with command-line values on top (`{"loop.max_iterations": 3}`); a None value is a flag
        not given."""
        changes: dict[str, dict[str, object]] = {}
        for dotted, value in flags.items():
            if value is not None:
                section, key = dotted.split(".")
                changes.setdefault(section, {})[key] = value
        return dataclasses.replace(self, **{
            name: dataclasses.replace(getattr(self, name), **keys) for name, keys in changes.items()})


def build(values: Mapping[str, Mapping[str, object]], fields: Mapping[str, Field]) -> Settings:
    """The typed settings from validated values (every key present, defaults filled in)."""
    return Settings(**{name: cls(**{key: frozen(values[name][key], spec)
                                    for key, spec in (fields[name].fields or {}).items()})
                       for name, cls in SECTIONS.items()})


def frozen(value: object, spec: Field) -> object:
    """A validated value as its section's class holds it: lists as tuples, maps read-only, numbers as floats."""
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, dict):
        return MappingProxyType(dict(value))
    if spec.type == "float" and isinstance(value, int):
        return float(value)
    return value


SECTIONS: dict[str, type] = {"check": Check, "iterate": Iterate, "missions": Missions, "hints": Hints,
                             "papers": Papers, "loop": Loop, "circuit": Circuit, "trust": Trust, "agent": Agent,
                             "sandbox": Sandbox, "gate": Gate, "guard": Guard, "service": Service, "fleet": Fleet,
                             "review": Review, "notify": Notify, "secrets": Secrets, "plugins": Plugins}
