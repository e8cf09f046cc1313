"""Scale: `dun check --format json` on a 50,000-file repository with only built-in non-command checks.

The generated repository (cached in the temp dir, keyed by VERSION) holds 50,000 tracked files in nested
directories, 500 markdown plans with 10,000 checkboxes, a Cobertura coverage.xml for 5,000 source files, and
`.dun/plugins/bench.yaml` with a checkboxes, coverage, glob-min-count and pattern-count check; the built-in
`git` plugin adds git-status. The python and go built-ins are disabled, so no command check runs.

Three measurements, each against `git status --porcelain` in the same repository, timed alternately with it:
- fresh: `dun check --format json --no-cache`, every check runs and no cache is read (it stores what it found);
  reported without a target;
- no change: `dun check --format json` with nothing changed since the last run, every result reused; target <= 1.2x;
- one file edited: a line appended to one source file before every run: every check runs, the per-file caches serve
  every other file; target <= 2x.
`--cold` also times a run with DUN_NO_CACHE=1 (no cache of any kind), reported without a target.
Run: .venv/bin/python bench/check_large_repo.py [--runs N] [--rebuild] [--keep] [--cold]
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Run, broken, dun_command, git, git_env, parser, report, time_command, time_pair

TARGET = 2.0
NO_CHANGE_TARGET = 1.2
VERSION = "v3"  # bump whenever the generated repository changes (v3: .dun/.gitignore as dun-gitignore 2 writes it)
TOTAL_FILES = 50_000
SOURCE_FILES = 5_000  # src/**/*.py, all in coverage.xml
TEST_FILES = 2_500  # tests/**/*.py
PLAN_FILES = 500  # docs/**/*.md
BOXES_PER_PLAN = 20  # 10,000 boxes in all
TODO_EVERY = 97  # one .py file in this many holds a TODO marker
SEED = 20261121
EXPECTED = {  # check id -> status the generated data must produce
    "bench-boxes": "fail", "bench-coverage": "fail", "bench-sources": "pass", "bench-todo": "fail",
    "git-status": "pass",
}

MANIFEST = """\
id: bench
description: Built-in non-command check types over a large repository.
priority: 30
checks:
  - id: bench-boxes
    type: checkboxes
    description: Every non-optional box in the plans is ticked.
    files: ["docs/**/*.md"]
  - id: bench-coverage
    type: coverage
    description: Line coverage of src/ meets 80%.
    file: coverage.xml
    format: cobertura
    threshold: 80
  - id: bench-sources
    type: files
    description: The sources are all there.
    rule: glob-min-count
    glob: ["src/**/*.py"]
    min: 5000
  - id: bench-todo
    type: files
    description: No TODO markers in Python files.
    rule: pattern-count
    glob: ["**/*.py"]
    pattern: '\\b(TODO|FIXME|XXX)\\b'
    max: 0
"""
CONFIG = "plugins:\n  disabled: [python, go]\n"
# Filler files: (top directory, extension, content template); {i} is the file's number.
FILLER = [
    ("vendor", "js", "export function f{i}(x) {{\n  return x + {i};\n}}\n"),
    ("web", "css", ".c{i} {{ margin: {i}px; }}\n"),
    ("data", "json", '{{"id": {i}, "name": "record-{i}", "tags": ["a", "b"]}}\n'),
    ("data", "csv", "id,value\n{i},{i}\n"),
    ("assets", "txt", "asset {i}\nplain text, nothing to see\n"),
    ("services", "go", "package svc\n\n// F{i} returns its argument.\nfunc F{i}(x int) int {{ return x + {i} }}\n"),
    ("native", "rs", "pub fn f{i}(x: u32) -> u32 {{\n    x + {i}\n}}\n"),
    ("web", "html", "<p>page {i}</p>\n"),
]


def nested(top: str, i: int, per_dir: int = 100) -> str:
    """A nested directory for file number `i`: ~per_dir files per leaf, leaves 3 levels under `top`."""
    leaf = i // per_dir
    return f"{top}/g{leaf // 100:02d}/m{leaf // 10 % 10}/l{leaf % 10}"


def source_lines(rng: random.Random) -> int:
    return rng.randint(15, 65)


def python_source(i: int, lines: int) -> str:
    body = [f'"""Generated module {i}."""', ""]
    body += [f"value_{k} = {k} * {i}" for k in range(lines - 2)]
    if i % TODO_EVERY == 0:
        body[-1] += "  # TODO: replace the generated value"
    return "\n".join(body) + "\n"


def plan(rng: random.Random, n: int) -> str:
    """A markdown plan with exactly BOXES_PER_PLAN real boxes; some optional, some fake ones in fences."""
    out = [f"# Plan {n}", "", "What this part of the project still needs.", "", "## Tasks", ""]
    required = BOXES_PER_PLAN - 4
    for k in range(required):
        mark = "x" if n % 25 == 0 or rng.random() < 0.6 else " "
        indent = "  " if k % 5 == 4 else ""
        out.append(f"{indent}- [{mark}] task {n}.{k}: implement step {k} of plan {n}")
        if k % 8 == 3:
            out.append(f"{indent}  verify: make test-{n}-{k}")
    if n % 10 == 0:  # boxes inside a code fence are not boxes
        out += ["", "Example:", "", "```markdown", "- [ ] not a real box", "- [x] nor this one", "```", ""]
    out += ["", "## Optional", ""]
    out += [f"- [{'x' if rng.random() < 0.3 else ' '}] optional idea {n}.{k}" for k in range(3)]
    out += ["", "## Done", "", f"- [x] set up plan {n}", ""]
    return "\n".join(out)


def cobertura(sizes: list[tuple[str, int]], rng: random.Random) -> str:
    """A coverage.py-style Cobertura report; about 78% of the lines are hit, so the 80% threshold fails."""
    packages: dict[str, list[str]] = {}
    valid = covered = 0
    for path, lines in sizes:
        rate = rng.choice((0.35, 0.6, 0.75, 0.85, 0.95, 1.0))
        hits = [k != 1 and rng.random() < rate for k in range(1, lines + 1)]
        hits[0] = True
        valid += lines
        covered += sum(hits)
        rows = "".join(f'\t\t\t\t\t\t<line number="{k}" hits="{int(h)}"/>\n' for k, h in enumerate(hits, 1))
        packages.setdefault(path.rsplit("/", 1)[0].replace("/", "."), []).append(
            f'\t\t\t\t<class name="{path.rsplit("/", 1)[1]}" filename="{path}" complexity="0" '
            f'line-rate="{sum(hits) / lines:.4f}" branch-rate="0">\n\t\t\t\t\t<methods/>\n'
            f"\t\t\t\t\t<lines>\n{rows}\t\t\t\t\t</lines>\n\t\t\t\t</class>\n")
    body = "".join(
        f'\t\t<package name="{name}" line-rate="0" branch-rate="0" complexity="0">\n'
        f"\t\t\t<classes>\n{''.join(classes)}\t\t\t</classes>\n\t\t</package>\n"
        for name, classes in packages.items())
    return ('<?xml version="1.0" ?>\n'
            f'<coverage version="7.4.0" timestamp="1763683200000" lines-valid="{valid}" lines-covered="{covered}" '
            f'line-rate="{covered / valid:.4f}" branches-covered="0" branches-valid="0" branch-rate="0" '
            'complexity="0">\n\t<sources>\n\t\t<source>.</source>\n\t</sources>\n'
            f"\t<packages>\n{body}\t</packages>\n</coverage>\n")


def files() -> Iterator[tuple[str, str]]:
    """Every (path, content) of the repository: exactly TOTAL_FILES of them."""
    rng = random.Random(SEED)
    # `.dun/.gitignore` as `dun init` writes it: a `dun iterate` run (bench/iterate_large_repo.py) leaves the tree clean
    dun_ignore = (Path(__file__).resolve().parent.parent / "templates" / "dun.gitignore").read_text(encoding="utf-8")
    fixed = {".dun/plugins/bench.yaml": MANIFEST, ".dun/config.yaml": CONFIG, ".dun/.gitignore": dun_ignore,
             "README.md": "# bench\n\nA generated repository for bench/check_large_repo.py.\n"}
    yield from fixed.items()
    sizes = []
    for i in range(SOURCE_FILES):
        path = f"{nested('src', i)}/mod_{i:05d}.py"
        lines = source_lines(rng)
        sizes.append((path, lines))
        yield path, python_source(i, lines)
    yield "coverage.xml", cobertura(sizes, rng)
    for i in range(TEST_FILES):
        yield f"{nested('tests', i)}/test_{i:05d}.py", python_source(SOURCE_FILES + i, 6)
    for n in range(PLAN_FILES):
        yield f"docs/area{n // 50:02d}/part{n // 10 % 5}/plan_{n:03d}.md", plan(rng, n)
    filler = TOTAL_FILES - len(fixed) - SOURCE_FILES - 1 - TEST_FILES - PLAN_FILES
    for i in range(filler):
        top, ext, template = FILLER[i % len(FILLER)]
        yield f"{nested(top, i // len(FILLER))}/f_{i:05d}.{ext}", template.format(i=i)


def fast_import(root: Path) -> int:
    """Commit every file in one `git fast-import` stream (one pack, no per-file hashing by `git add`)."""
    proc = subprocess.Popen(["git", "-c", "core.fsync=none", "fast-import", "--quiet"], cwd=root, env=git_env(),
                            stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None
    message = b"Generated large repository for dun benchmarks\n"
    proc.stdin.write(b"commit refs/heads/main\ncommitter dun bench <bench@example.invalid> 1763683200 +0000\n"
                     b"data %d\n%s" % (len(message), message))
    count = 0
    for path, text in files():
        data = text.encode()
        proc.stdin.write(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))
        count += 1
    proc.stdin.write(b"done\n")
    proc.stdin.close()
    if proc.wait() != 0:
        raise RuntimeError(f"git fast-import failed: {proc.stderr.read().decode(errors='replace')}")  # type: ignore[union-attr]
    return count


def build(root: Path) -> None:
    """Generate the repository at `root` (built in a sibling directory, then renamed into place)."""
    staging = root.with_name(f"{root.name}.building-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    start = time.perf_counter()
    git(staging, "init", "-q", "--initial-branch=main")
    count = fast_import(staging)
    git(staging, "reset", "-q", "--hard", "main")  # writes the work tree and the index
    # Refresh the index once the files are older than it, so no entry stays "racily clean" (re-hashed
    # by every later `git status`), then prove the tree is clean and complete.
    time.sleep(1.1)
    git(staging, "update-index", "-q", "--really-refresh")
    dirty = git(staging, "status", "--porcelain")
    tracked = git(staging, "ls-files", "-z").count(b"\0")
    if dirty or tracked != TOTAL_FILES or count != TOTAL_FILES:
        raise RuntimeError(f"generated repo is wrong: {tracked} tracked, {count} written, dirty: {dirty[:200]!r}")
    shutil.rmtree(root, ignore_errors=True)
    staging.rename(root)
    print(f"built {TOTAL_FILES} files at {root} in {time.perf_counter() - start:.1f} s", file=sys.stderr)


def repo_path() -> Path:
    return Path(tempfile.gettempdir()) / f"dun-bench-large-repo-{VERSION}" / "repo"


def ensure_repo(rebuild: bool) -> Path:
    root = repo_path()
    marker = root.parent / "complete"
    if rebuild or not marker.is_file() or not (root / ".git").is_dir():
        marker.unlink(missing_ok=True)
        build(root)
        marker.write_text(VERSION + "\n", encoding="utf-8")
    return root


def accept(run: Run, cached: bool | None = None, edited: bool = False) -> str | None:
    """None when the run reported what the data is built to produce (and, with `cached`, reused all or none; with
    `edited`, one tracked file is modified, so git-status fails)."""
    if run.returncode not in (0, 1):  # 1 is expected: the plans hold open boxes
        return f"exit code {run.returncode} (2: usage or config error, 3: internal error)"
    try:
        checks = {c["id"]: c for c in json.loads(run.stdout)["checks"]}
    except (ValueError, KeyError, TypeError) as exc:
        return f"unreadable JSON report: {exc}"
    expected = {**EXPECTED, "git-status": "fail"} if edited else EXPECTED
    wrong = [f"{cid}: {checks[cid]['status'] if cid in checks else 'missing'} ({checks.get(cid, {}).get('signal')})"
             for cid, status in expected.items() if checks.get(cid, {}).get("status") != status]
    extra = sorted(set(checks) - set(EXPECTED) - {c for c, v in checks.items() if v["status"] == "skip"})
    if extra:
        wrong.append(f"unexpected checks ran: {', '.join(extra)}")
    if cached is not None and any(c.get("cached") is not cached for c in checks.values()):
        wrong.append(f"expected every result {'reused' if cached else 'fresh'}: "
                     + ", ".join(f"{cid}={c.get('cached')}" for cid, c in checks.items()))
    return "; ".join(wrong) or None


def clean(run: Run) -> str | None:
    return f"exit {run.returncode} or a dirty tree: {run.stdout[:200]!r}" if run.returncode or run.stdout else None


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--rebuild", action="store_true", help="regenerate the cached repository")
    p.add_argument("--keep", action="store_true", help="print the cached repository's path (it is kept either way)")
    p.add_argument("--cold", action="store_true", help="also time a run with no cache of any kind")
    args = p.parse_args()
    try:
        root = ensure_repo(args.rebuild)
    except (OSError, RuntimeError) as exc:
        broken(f"cannot generate the repository: {exc}")
    if args.keep:
        print(f"repository: {root}")
    dun = [*dun_command(), "check", "--format", "json"]
    git_status = ["git", "status", "--porcelain"]
    subject, baseline = time_pair([*dun, "--no-cache"], git_status, root, runs=args.runs,
                                  accept=lambda run: accept(run, cached=False), accept_baseline=clean)
    summary = json.loads(subject.last.stdout)["summary"]
    notes = [f"{TOTAL_FILES} files, {PLAN_FILES * BOXES_PER_PLAN} boxes, coverage.xml for {SOURCE_FILES} files; "
             f"exit {subject.last.returncode}, {summary['actionable']} actionable of {summary['total']} checks",
             f"baseline CPU {baseline.cpu_median * 1000:.0f} ms"]
    # no target since --no-cache reads no cache at all (the per-file ones included): the edited run below has 2x
    print(f"== check_large_repo: fresh, dun check --format json --no-cache: median {subject.median * 1000:.0f} ms, "
          f"CPU {subject.cpu_median * 1000:.0f} ms, {subject.median / baseline.median:.2f}x git status "
          f"({baseline.median * 1000:.0f} ms; no target); " + "; ".join(notes))
    code = 0
    subject, baseline = time_pair(dun, git_status, root, runs=args.runs, accept=lambda run: accept(run, cached=True),
                                  accept_baseline=clean)
    code = max(code, report("check_large_repo: no change, dun check --format json", subject,
                            "git status --porcelain", baseline.median, NO_CHANGE_TARGET,
                            [f"baseline CPU {baseline.cpu_median * 1000:.0f} ms"]))
    # One file edited before every run (a new line each time: the tree always differs from the last run's), as
    # between two checks of an agent's loop: every check runs, the per-file caches serve every other file.
    edited = f"{nested('src', 0)}/mod_00000.py"
    edit = ["sh", "-c", f'echo "# edit $(date +%s%N)" >> {edited} && exec "$@"', "edit", *dun]
    try:
        subject, baseline = time_pair(edit, git_status, root, runs=args.runs,
                                      accept=lambda run: accept(run, cached=False, edited=True))
    finally:
        subprocess.run(["git", "checkout", "--", edited], cwd=root, check=False)
    code = max(code, report("check_large_repo: one file edited, dun check --format json", subject,
                            "git status --porcelain", baseline.median, TARGET,
                            [f"baseline CPU {baseline.cpu_median * 1000:.0f} ms"]))
    if args.cold:
        cold = time_command(dun, root, runs=args.runs, env={**os.environ, "DUN_NO_CACHE": "1"}, accept=accept)
        print(f"== cold (DUN_NO_CACHE=1, no cache of any kind): median {cold.median * 1000:.0f} ms, "
              f"CPU {cold.cpu_median * 1000:.0f} ms, {cold.median / baseline.median:.2f}x git status (no target)")
    return code

if __name__ == "__main__":
    sys.exit(main())
