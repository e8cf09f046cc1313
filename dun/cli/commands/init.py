"""`dun init`: scaffold `.dun/config.yaml`, an example plugin and a MISSION.md from templates/; with `--ci`, a
GitHub Actions workflow from templates/ci/ instead."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from dun import DISTRIBUTION, __version__
from dun.agents.versions import TESTED
from dun.core.atomic import write_text_atomic
from dun.core.errors import UsageError
from dun.core.kinds import ExitCode
from dun.core.resources import data_dir
from dun.missions import place
from dun.store.layout import CONFIG, GITIGNORE, PLUGINS, find_repo
from dun.store.store import refresh_gitignore

if TYPE_CHECKING:
    from dun.missions import Rendered

# template name -> path in the repo
SCAFFOLD = {
    "config.yaml": CONFIG,
    "example-plugin.yaml": f"{PLUGINS}/example.yaml",
    "MISSION.md": "MISSION.md",
    "dun.gitignore": GITIGNORE,
}
CI_TARGETS = {"github": ".github/workflows/dun.yml", "github-matrix": ".github/workflows/dun-fleet.yml"}
LOOP_BRANCH = "dun/loop"
SETUP_SCRIPT = ".github/dun-setup.sh"  # the workflows' hook for the project's own dependencies
CI_AGENT = "claude"  # the agent the workflows install and give a key to (ANTHROPIC_API_KEY)
_CRON_FIELD = re.compile(r"^[0-9*/,\-]+$")


def run_init(path: str | None, force: bool, ci: str | None = None, schedule: str | None = None,
             budget: float = 5.0, parallel: int = 2, agents_md: bool = False, mission: str | None = None,
             mission_dir: str | None = None, spec: str | None = None) -> int:
    """Write what is missing of the scaffold and keep what exists (`--force` replaces it, keeping a backup);
    works in a repository any other dun command has already touched. With `mission`, MISSION.md comes from that
    mission template and its checks go to `.dun/plugins/mission-NAME.yaml`."""
    root = find_repo(path).root
    if ci is not None:
        return _init_ci(root, ci, force, schedule, budget, parallel, spec)
    if schedule is not None or spec is not None:
        raise UsageError(f"{'--schedule' if schedule is not None else '--pip-spec'} goes with --ci")
    if mission_dir is not None and mission is None:
        raise UsageError("--mission-dir goes with --mission")
    rendered = render_mission(root, mission, mission_dir) if mission is not None else None
    if agents_md:
        from dun.cli.commands.agents_md import AGENTS_FILE, write_agents_section

        sys.stdout.write(f"{write_agents_section(root)} {AGENTS_FILE} (the dun section)\n")
    templates = data_dir("templates")
    texts = {rel: (templates / name).read_text(encoding="utf-8") for name, rel in SCAFFOLD.items()
             if rel != GITIGNORE}
    if rendered is not None:
        texts["MISSION.md"] = rendered.mission
        if rendered.manifest is not None:
            texts[rendered.manifest_rel] = rendered.manifest
    kept = []
    for rel in [*SCAFFOLD.values(), *(r for r in texts if r not in SCAFFOLD.values())]:
        if rel == GITIGNORE:  # dun's own file: brought up to date, a person's lines kept
            written = refresh_gitignore(root / rel)
            sys.stdout.write(f"{'wrote' if written else 'up to date'} {rel}\n")
            continue
        done = place(root, rel, texts[rel], force)
        if done == "kept":
            kept.append(rel)
        else:
            sys.stdout.write(done + "\n")
    if kept:
        sys.stdout.write(f"kept {', '.join(kept)} (yours; --force replaces them, keeping a backup)\n")
    if rendered is not None and "MISSION.md" in kept:
        sys.stdout.write(f"note: the {rendered.name} mission is not in the MISSION.md kept: its checks ask for what "
                         "the template's MISSION.md describes (--force writes it, keeping yours as MISSION.md.bak)\n")
    if (root / "MISSION.md").is_file() and not _has_boxes(root, "MISSION.md"):
        sys.stdout.write("note: MISSION.md has no boxes yet (`- [ ] ...` lines): until it has, the mission gives "
                         "the loop no work\n")
    from dun.checks.unrun import init_report  # which built-in checks apply here (issue 25)

    sys.stdout.writelines(init_report(root))
    if rendered is not None and rendered.manifest is not None:
        sys.stdout.write(f"next: edit MISSION.md (the topic, the tasks) and the targets in {rendered.manifest_rel}, "
                         "then run `dun check`\n")
    else:
        sys.stdout.write("next: edit MISSION.md and .dun/plugins/example.yaml, then run `dun check`\n")
    return ExitCode.OK


def render_mission(root: Path, name: str, mission_dir: str | None,
                   variables: dict[str, str] | None = None) -> Rendered:
    """Mission template `name` rendered, looked up in `--mission-dir` (else the config's `missions.dir`), the
    user's templates and dun's."""
    from dun.engine.manager import check_types, make_manager
    from dun.engine.manifest import check_manifest_text
    from dun.missions import CHECKS_FILE, render

    rendered = render(name, variables, mission_dirs(root, mission_dir))
    if rendered.manifest is not None:  # nothing written yet: a template dun check could not load is refused
        types = check_types(make_manager(agents=False))
        check_manifest_text(rendered.manifest, str(rendered.source / CHECKS_FILE), types)
    return rendered


def mission_dirs(root: Path, mission_dir: str | None) -> list[Path]:
    """The template directories named by `--mission-dir` or, without it, by the config key `missions.dir`."""
    from dun.missions import named_dir

    if mission_dir is not None:
        return [named_dir(Path.cwd(), mission_dir, "--mission-dir")]
    from dun.config.loader import dun_config

    configured = dun_config(root).settings.missions.dir
    return [] if configured is None else [named_dir(root, configured, "missions.dir")]


def _has_boxes(root: Path, rel: str) -> bool:
    from dun.checks.readers.markdown import parse_boxes
    from dun.core.textfiles import read_text

    text, _ = read_text(root / rel, root=root)
    return bool(text) and bool(parse_boxes(text or "", rel))


def check_cron(spec: str) -> str:
    """Five cron fields of digits, `*`, `/`, `,` and `-`: what GitHub's schedule accepts, checked before writing."""
    fields = spec.split()
    if len(fields) != 5 or not all(_CRON_FIELD.match(f) for f in fields):
        raise UsageError(f"--schedule takes five cron fields, e.g. '0 2 * * *', not {spec!r}")
    return " ".join(fields)


def pip_spec(given: str | None) -> str:
    """What the workflow installs dun with: `dun-loop==VERSION` (this dun), or the requirement given (a wheel's
    path, `dun-loop @ git+URL@TAG` before the name is on the index), which must fit in a quoted YAML string."""
    if given is None:
        return f"{DISTRIBUTION}=={__version__}"
    if not given.strip() or any(c in given for c in '"\\$`\n\r'):
        raise UsageError(f"--pip-spec takes one pip requirement without quotes, $, ` or backslashes, not {given!r}")
    return given.strip()


def agent_cli() -> str:
    """The npm package of the agent CLI at the version dun is tested with (dun/agents/versions.py)."""
    pin = TESTED[CI_AGENT]
    return f"{pin.package}@{pin.version}"


def render_workflow(ci: str, schedule: str | None, budget: float, parallel: int, spec: str | None = None) -> str:
    """The workflow text: github.yml (plus the scheduled loop job when `schedule` is given), or github-matrix.yml."""
    templates = data_dir("templates") / "ci"
    values = {"__DUN_PIP_SPEC__": pip_spec(spec), "__AGENT_CLI__": agent_cli(), "__BUDGET__": f"{budget:g}",
              "__BRANCH__": LOOP_BRANCH, "__PARALLEL__": str(parallel)}
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


def _init_ci(root: Path, ci: str, force: bool, schedule: str | None, budget: float, parallel: int,
             spec: str | None) -> int:
    if ci not in CI_TARGETS:
        raise UsageError(f"unknown --ci '{ci}'; choose from {', '.join(CI_TARGETS)}")
    if budget <= 0:
        raise UsageError("--budget must be above 0: an unattended loop needs a spending cap")
    text = render_workflow(ci, schedule, budget, parallel, spec)  # bad input is named before "refusing to overwrite"
    dest = root / CI_TARGETS[ci]
    if dest.exists() and not force:
        raise UsageError(f"refusing to overwrite {CI_TARGETS[ci]} (use --force)")
    write_text_atomic(dest, text)
    sys.stdout.write(f"wrote {CI_TARGETS[ci]}\n")
    setup = root / SETUP_SCRIPT
    if not setup.exists() and not setup.is_symlink():
        place(root, SETUP_SCRIPT, (data_dir("templates") / "ci" / "dun-setup.sh").read_text(encoding="utf-8"), False)
        sys.stdout.write(f"wrote {SETUP_SCRIPT} (the workflow runs it first: put the commands that install your "
                         "project's dependencies there)\n")
    if schedule is not None or ci == "github-matrix":
        sys.stdout.write("next: add the ANTHROPIC_API_KEY repository secret, and allow GitHub Actions to create "
                         "pull requests (Settings > Actions > General)\n")
    return ExitCode.OK
