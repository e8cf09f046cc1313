"""`dun init`: scaffold `.dun/config.yaml`, an example plugin and a MISSION.md from templates/."""

from __future__ import annotations

import shutil
import sys

from dun.core.errors import UsageError
from dun.core.git import find_repo
from dun.core.kinds import ExitCode
from dun.core.resources import data_dir

# template name -> path in the repo
SCAFFOLD = {
    "config.yaml": ".dun/config.yaml",
    "example-plugin.yaml": ".dun/plugins/example.yaml",
    "MISSION.md": "MISSION.md",
    "dun.gitignore": ".dun/.gitignore",
}


def run_init(path: str | None, force: bool) -> int:
    root = find_repo(path).root
    templates = data_dir("templates")
    targets = {root / dest: templates / name for name, dest in SCAFFOLD.items()}
    existing = [str(t.relative_to(root)) for t in targets if t.exists()]
    if existing and not force:
        raise UsageError(f"refusing to overwrite {', '.join(existing)} (use --force)")
    for dest, src in targets.items():
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
        sys.stdout.write(f"wrote {dest.relative_to(root)}\n")
    sys.stdout.write("next: edit MISSION.md and .dun/plugins/example.yaml, then run `dun check`\n")
    return ExitCode.OK
