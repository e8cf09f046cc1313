"""test_runners: `dun check` against the bare test command, per ecosystem, on the fixture projects of tests/checks
(node --test, vitest, jest, mocha, ava, tape, cargo test, python -m unittest, go test).

Each project is the fixture's suite with failing tests, plus COPIES copies of its passing tests (a suite a few
hundred tests large, as a small real project has). Timed alternately, median of --runs:
- baseline: the runner as a user types it (`node_modules/.bin/vitest run`, `cargo test`, `python -m unittest`...);
- subject: `dun check --only CHECK`: the runner's check (the runner with its structured reporter, the report
  parsed into items), with dun's own start, git status and report around it. A source file is changed before
  every run (of both), as between two runs of a working day, so the result is never reused; dun's catalog and
  config caches are read as they always are (`--no-cache` would parse every manifest again), and so is the plan
  of the last identical run (dun/engine/launch.py: the runner starts as dun starts). The other checks a full `dun
  check` adds (go vet, clippy, tsc, lint) are work of their own, not the cost of reading the tests.
- Go compared like with like: `go-test` writes the coverage profile `go-coverage` judges (`-coverprofile`, which
  compiles the packages with instrumentation), so the baseline writes one too; plain `go test ./...` is timed in
  the same rounds and reported beside it.
Target: dun check costs at most 10% more wall time than the bare command (ratio <= 1.1).
A project whose toolchain is missing is reported as skipped, with the reason.
Run: .venv/bin/python bench/test_runners.py [--runs N] [--copies N] [--only vitest,cargo]
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import EXIT_FAIL, EXIT_PASS, Timing, dun_command, parser, report, run_once

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "checks"))  # the fixture projects

TARGET = 1.1
JS_BASELINE = {"node-test": ["node", "--test", "test/"], "vitest": ["node_modules/.bin/vitest", "run"],
               "jest": ["node_modules/.bin/jest", "--ci"], "mocha": ["node_modules/.bin/mocha", "test/"],
               "ava": ["node_modules/.bin/ava"], "tape": ["sh", "-c", "node_modules/.bin/tape test/*.js"]}


def js_project(root: Path, runner: str, copies: int) -> list[str]:
    import test_js_projects as js

    js.make_project(root, runner)
    passing = root.parent / f"{runner}-clean"
    js.make_project(passing, runner, clean=True)
    for rel in js.PROJECTS[runner][1]:
        if "helper" in rel:
            continue
        source = (passing / rel).read_text()
        stem, _, ext = rel.rpartition(".")
        name, _, suffix = stem.partition(".")  # math.test -> math + test
        for i in range(copies):
            target = f"{name}{i}.{suffix}.{ext}" if suffix else f"{name}{i}.{ext}"
            (root / target).write_text(source)
    return JS_BASELINE[runner]


def rust_project(root: Path, copies: int) -> list[str]:
    import test_rust_projects as rs

    lib = rs.LIB + "".join(f"\n#[test]\nfn copy_{i}() {{\n    assert_eq!(double({i}), {2 * i});\n}}\n"
                           for i in range(copies * 4))
    rs.crate(root, lib=lib)
    return ["cargo", "test", "--workspace", "--no-fail-fast"]


def unittest_project(root: Path, copies: int) -> list[str]:
    import test_unittest_projects as ut

    ut.project(root)
    source = (root / "tests/test_math.py").read_text().split("def load_tests")[0]
    body = (root / "tests/test_math.py").read_text().split("class TestMath")[1]
    for i in range(copies):
        (root / f"tests/test_copy{i}.py").write_text(source + f"class TestCopy{i}" + body.replace(
            "self.assertEqual(add(1, 1), 3)", "self.assertEqual(add(1, 1), 2)").replace(
            "self.assertLess(i, 1)", "self.assertLess(i, 3)").replace('raise KeyError("missing")', "pass"))
    return [".venv/bin/python", "-m", "unittest", "discover", "-v", "-s", "."]


def go_project(root: Path, copies: int) -> list[str]:
    """The like-for-like baseline (with a coverage profile, as go-test writes); plain `go test ./...` is PLAIN_GO."""
    import test_real_projects as real

    for rel, text in real.GO_FILES.items():
        if not rel.startswith(("broken/", "vetted/")):
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    tests = "".join(f"\nfunc TestCopy{i}(t *testing.T) {{\n\tif Double({i}) != {2 * i} {{\n\t\tt.Fatal(\"x\")\n"
                    "\t}\n}\n" for i in range(copies * 4))
    (root / "copies_test.go").write_text('package calc\n\nimport "testing"\n' + tests)
    from checks_support import git

    git(root, "init", "-q", "-b", "main")
    return ["go", "test", f"-coverprofile={root.parent / 'go-cover.out'}", "./..."]


PLAIN_GO = ["go", "test", "./..."]


def alternate(subject: list[str], baseline: list[str], root: Path, runs: int,
              also: list[str] | None = None) -> tuple[Timing, Timing, Timing | None]:
    """Baseline (and `also`) then subject, `runs` rounds after one untimed; a source file changed before every
    run."""
    pair = (Timing(subject), Timing(baseline))
    extra = Timing(also) if also else None
    touched = _source(root)
    for round_ in range(runs + 1):
        for timing in (pair[1], *([extra] if extra else []), pair[0]):
            with touched.open("a") as fh:
                fh.write("\n" if touched.suffix == ".py" else "\n// touched\n")
            run = run_once(timing.argv, root)
            if round_:
                timing.runs.append(run)
    return (*pair, extra)


def _source(root: Path) -> Path:
    for pattern in ("test/math.test.js", "test/math.js", "src/lib.rs", "pkg/mathx.py", "calc.go"):
        if (root / pattern).is_file():
            return root / pattern
    raise FileNotFoundError(f"no source file to change in {root}")


def missing(kind: str) -> str | None:
    if kind in JS_BASELINE:
        import test_js_projects as js

        return js._missing()
    program = {"cargo": "cargo", "unittest": "python3", "go": "go"}[kind]
    return None if shutil.which(program) else f"{program} is not installed"


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--copies", type=int, default=10, help="copies of the passing tests (default 10)")
    p.add_argument("--only", default="", help="comma-separated project kinds")
    args = p.parse_args()
    builders: dict[str, Callable[[Path], list[str]]] = {
        **{r: (lambda root, r=r: js_project(root, r, args.copies)) for r in JS_BASELINE},
        "cargo": lambda root: rust_project(root, args.copies),
        "unittest": lambda root: unittest_project(root, args.copies),
        "go": lambda root: go_project(root, args.copies),
    }
    wanted = [k for k in builders if not args.only or k in args.only.split(",")]
    code = EXIT_PASS
    base = Path(tempfile.mkdtemp(prefix="dun-bench-runners-"))
    os.environ.update({"CARGO_TARGET_DIR": str(base / "cargo-target"), "GOFLAGS": "-mod=mod",
                       "GOCACHE": str(base / "gocache")})
    try:
        for kind in wanted:
            why = missing(kind)
            if why:
                print(f"== {kind}\n  skipped   {why}")
                continue
            root = base / kind
            baseline = builders[kind](root)
            check = {"cargo": "cargo-test", "go": "go-test"}.get(kind, kind)
            subject, bare, plain = alternate([*dun_command(), "check", "--only", check], baseline, root, args.runs,
                                             PLAIN_GO if kind == "go" else None)
            notes = [f"overhead {(subject.median - bare.median) * 1000:+.0f} ms; CPU {subject.cpu_median * 1000:.0f} ms"
                     f" against {bare.cpu_median * 1000:.0f} ms"]
            if plain is not None:
                notes.append(f"plain `{' '.join(PLAIN_GO)}` {plain.median * 1000:.0f} ms (CPU "
                             f"{plain.cpu_median * 1000:.0f} ms): ratio {subject.median / plain.median:.2f} against it;"
                             " go-test also writes the coverage profile go-coverage reads")
            if report(f"{kind}: dun check against the bare runner", subject, " ".join(baseline), bare.median,
                      TARGET, notes) != EXIT_PASS:
                code = EXIT_FAIL
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
