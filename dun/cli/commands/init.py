"""`dun init`: scaffold `.dun/config.yaml`, an example plugin and a MISSION.md from templates/; with `--ci`, a
GitHub Actions workflow from templates/ci/ instead."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

from dun import __version__
from dun.core.atomic import write_text_atomic
from dun.core.errors import UsageError
from dun.core.git import find_repo
from dun.core.kinds import ExitCode
from dun.core.resources import data_dir
from dun.store.layout import CONFIG, GITIGNORE, PLUGINS

# template name -> path in the repo
SCAFFOLD = {
    "config.yaml": CONFIG,
    "example-plugin.yaml": f"{PLUGINS}/example.yaml",
    "MISSION.md": "MISSION.md",
    "dun.gitignore": GITIGNORE,
}
CI_TARGETS = {"github": ".github/workflows/dun.yml", "github-matrix": ".github/workflows/dun-fleet.yml"}
LOOP_BRANCH = "dun/loop"
_CRON_FIELD = re.compile(r"^[0-9*/,\-]+$")


def run_init(path: str | None, force: bool, ci: str | None = None, schedule: str | None = None,
             budget: float = 5.0, parallel: int = 2, agents_md: bool = False) -> int:
    root = find_repo(path).root
    if ci is not None:
        return _init_ci(root, ci, force, schedule, budget, parallel)
    if schedule is not None:
        raise UsageError("--schedule goes with --ci")
    templates = data_dir("templates")
    targets = {root / dest: templates / name for name, dest in SCAFFOLD.items()}
    existing = [str(t.relative_to(root)) for t in targets if t.exists()]
    if agents_md:  # the AGENTS.md section alone is fine for a repository that already has dun's files
        from dun.cli.commands.agents_md import AGENTS_FILE, write_agents_section

        sys.stdout.write(f"{write_agents_section(root)} {AGENTS_FILE} (the dun section)\n")
        if existing and not force:
            sys.stdout.write(f"kept {', '.join(existing)} (use --force to overwrite)\n")
            targets = {dest: src for dest, src in targets.items() if not dest.exists()}
    if existing and not force and not agents_md:
        raise UsageError(f"refusing to overwrite {', '.join(existing)} (use --force)")
    for dest, src in targets.items():
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
        sys.stdout.write(f"wrote {dest.relative_to(root)}\n")
    from dun.checks.ecosystems import init_report  # which built-in checks apply here (issue 25)

    sys.stdout.writelines(init_report(root))
    sys.stdout.write("next: edit MISSION.md and .dun/plugins/example.yaml, then run `dun check`\n")
    return ExitCode.OK


def check_cron(spec: str) -> str:
    """Five cron fields of digits, `*`, `/`, `,` and `-`: what GitHub's schedule accepts, checked before writing."""
    fields = spec.split()
    if len(fields) != 5 or not all(_CRON_FIELD.match(f) for f in fields):
        raise UsageError(f"--schedule takes five cron fields, e.g. '0 2 * * *', not {spec!r}")
    return " ".join(fields)


def render_workflow(ci: str, schedule: str | None, budget: float, parallel: int) -> str:
    """The workflow text: github.yml (plus the scheduled loop job when `schedule` is given), or github-matrix.yml."""
    templates = data_dir("templates") / "ci"
    values = {"__DUN_VERSION__": __version__, "__BUDGET__": f"{budget:g}", "__BRANCH__": LOOP_BRANCH,
              "__PARALLEL__": str(parallel)}
    if ci == "github-matrix":
        text = (templates / "github-matrix.yml").read_text(encoding="utf-8")
        values["__CRON__"] = check_cron(schedule or "0 2 * * *")
    else:
        text = (templates / "github.yml").read_text(encoding="utf-8")
        if schedule is not None:
            values["__CRON__"] = check_cron(schedule)
            trigger = (templates / "github-loop-on.yml").read_text(encoding="utf-8")
            text = text.replace("\non:\n", f"\non:\n{trigger}", 1)
            text += (templates / "github-loop-job.yml").read_text(encoding="utf-8")
    for placeholder, value in values.items():
        text = text.replace(placeholder, value)
    return text


def _init_ci(root: Path, ci: str, force: bool, schedule: str | None, budget: float, parallel: int) -> int:
    if ci not in CI_TARGETS:
        raise UsageError(f"unknown --ci '{ci}'; choose from {', '.join(CI_TARGETS)}")
    if budget <= 0:
        raise UsageError("--budget must be above 0: an unattended loop needs a spending cap")
    dest = root / CI_TARGETS[ci]
    if dest.exists() and not force:
        raise UsageError(f"refusing to overwrite {CI_TARGETS[ci]} (use --force)")
    write_text_atomic(dest, render_workflow(ci, schedule, budget, parallel))
    sys.stdout.write(f"wrote {CI_TARGETS[ci]}\n")
    if schedule is not None or ci == "github-matrix":
        sys.stdout.write("next: add the ANTHROPIC_API_KEY repository secret, and allow GitHub Actions to create "
                         "pull requests (Settings > Actions > General)\n")
    return ExitCode.OK
