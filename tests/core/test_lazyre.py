"""dun/core/lazyre.py: a pattern compiled on first use answers as `re.compile` does, and the modules the built-in
`test-suites` check loads on every run that runs checks compile none of theirs until a project needs it (issue 23)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from dun.core.lazyre import LazyPattern

SOURCE = r"(?P<word>\w+)\s*(?:&&|;)\s*"
TEXT = "npm test && eslint . ; vitest run"


def test_every_method_answers_as_the_compiled_pattern() -> None:
    lazy, compiled = LazyPattern(SOURCE, re.M), re.compile(SOURCE, re.M)
    assert lazy.search(TEXT)[0] == compiled.search(TEXT)[0]  # type: ignore[index]
    assert lazy.search(TEXT, 5)[0] == compiled.search(TEXT, 5)[0]  # type: ignore[index]
    assert lazy.match(TEXT) is None and compiled.match(TEXT) is None
    assert lazy.fullmatch("test && ")["word"] == "test"  # type: ignore[index]
    assert [m.span() for m in lazy.finditer(TEXT)] == [m.span() for m in compiled.finditer(TEXT)]
    assert lazy.findall(TEXT) == compiled.findall(TEXT)
    assert lazy.split(TEXT) == compiled.split(TEXT)
    assert lazy.sub(r"<\g<word>>", TEXT, 1) == compiled.sub(r"<\g<word>>", TEXT, 1)
    assert lazy.sub(lambda m: m["word"].upper(), TEXT) == compiled.sub(lambda m: m["word"].upper(), TEXT)
    assert lazy.compiled is lazy.compiled  # compiled once, then kept


def test_a_bad_pattern_fails_when_used_as_re_compile_would() -> None:
    lazy = LazyPattern("(unclosed")
    try:
        lazy.search("x")
    except re.error:
        return
    raise AssertionError("an invalid pattern was accepted")


# In a fresh interpreter: load what `test-suites` loads, answer it on a project of none of their ecosystems, and list
# each module-level pattern that is compiled (a plain re.compile at import, or a LazyPattern that was used).
PROBE = """\
import json, re, sys
from pathlib import Path
from dun.checks import ecosystems, gorunner, jsproject, looked, pyrunner, rustrunner, suites, unrun
from dun.core.lazyre import LazyPattern
class Spec:
    options = {}
    next = None
outcome = suites._answer(Spec(), Path(sys.argv[1]))
compiled = [f"{m.__name__}.{name}" for m in (ecosystems, gorunner, jsproject, looked, pyrunner, rustrunner, unrun)
            for name, value in vars(m).items()
            if isinstance(value, re.Pattern) or (isinstance(value, LazyPattern) and value._compiled is not None)]
lazy = sum(isinstance(v, LazyPattern) for m in (gorunner, jsproject, pyrunner, rustrunner, unrun)
           for v in vars(m).values())
print(json.dumps({"status": outcome.status.value, "compiled": compiled, "lazy": lazy}))
"""


def probe(root: Path) -> dict[str, object]:
    proc = subprocess.run([sys.executable, "-c", PROBE, str(root)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_the_test_suites_check_compiles_no_pattern_of_an_ecosystem_the_project_lacks(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "plan.md").write_text("- [ ] a box\n")
    found = probe(tmp_path)
    assert found["status"] == "skip" and found["lazy"] == 24, found  # it answered, over every runner's patterns
    assert found["compiled"] == [], found


def test_the_probe_sees_a_pattern_a_project_needs(tmp_path: Path) -> None:
    """The same probe reports a compiled pattern when the project uses it: a Makefile's test target is read."""
    (tmp_path / "Makefile").write_text("test:\n\t./run-tests\n")
    assert "dun.checks.unrun._MAKE_TEST" in probe(tmp_path)["compiled"]  # type: ignore[operator]
