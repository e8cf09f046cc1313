"""`dun init`: scaffold `.dun/config.yaml`, an example plugin and a MISSION.md from templates/."""

from __future__ import annotations

import shutil
import sys

from dun.core.errors import EXIT_OK, UsageError
from dun.core.git import find_repo
from dun.core.resources import data_dir

# template name -> path in the repo
SCAFFOLD = {
    "config.yaml": ".dun/config.yaml",
    "example-plugin.yaml": ".dun/plugins/example.yaml",
    "MISSION.md": "MISSION.md",
    "dun.gitignore": ".dun/.gitignore",
}


def run_init(path: str | None, force: bool, agents_md: bool = False) -> int:
    root = find_repo(path).root
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
    sys.stdout.write("next: edit MISSION.md and .dun/plugins/example.yaml, then run `dun check`\n")
    return EXIT_OK
