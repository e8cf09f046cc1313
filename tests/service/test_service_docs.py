"""docs/service.md and docs/scale-out.md name every flag of the commands they document and every key they add."""

from __future__ import annotations

from pathlib import Path

import click

from dun.cli.main import cli
from dun.config.loader import CONFIG_FIELDS

ROOT = Path(__file__).resolve().parents[2]


def flags(*path: str) -> list[str]:
    command: click.Command = cli
    for name in path:
        assert isinstance(command, click.Group)
        command = command.commands[name]
    return [opt for param in command.params if isinstance(param, click.Option) for opt in param.opts
            if opt.startswith("--") and opt != "--help"]


def test_service_guide_documents_commands_flags_and_keys() -> None:
    guide = (ROOT / "docs" / "service.md").read_text(encoding="utf-8")
    for command in ("dun service install", "dun service uninstall", "dun service status", "dun init --ci github",
                    "dun fleet status", "dun loop --worktree"):
        assert command in guide, command
    for path in (("service", "install"), ("service", "uninstall"), ("service", "status"), ("fleet", "status")):
        for flag in flags(*path):
            assert flag in guide, f"{' '.join(path)} {flag}"
    for flag in ("--ci", "--schedule", "--budget"):
        assert flag in guide, flag
    for section in ("service", "fleet"):
        for key in CONFIG_FIELDS[section].fields or {}:
            assert f"`{section}.{key}`" in guide, f"{section}.{key}"


def test_scale_out_guide_covers_the_matrix_and_its_limits() -> None:
    guide = (ROOT / "docs" / "scale-out.md").read_text(encoding="utf-8")
    assert "dun init --ci github-matrix" in guide and "--parallel" in guide
    for topic in ("Runner minutes", "Secrets", "Concurrency groups", "max-parallel", "--max-budget-usd",
                  "templates/ci/github-matrix.yml", "actionlint"):
        assert topic in guide, topic
