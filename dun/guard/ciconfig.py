"""The repository's own CI and checks, weakened by editing its files: a workflow deleted or moved away, a test step
removed, or a failure made not to count (`|| true`, `continue-on-error: true`, `allow_failure: true`, `--exit-zero`,
`if: false`). An agent told to make CI pass can do it this way without fixing anything; the change lands with its
next commit. Judged for shell edits (sed, yq, a file rewritten by a redirection) and for the Write, Edit and MultiEdit
tools, against the file on disk where the guard can read it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from dun.guard.effects import Facts, interpreter
from dun.guard.expand import Val
from dun.guard.gates import CHECKS
from dun.guard.options import SPECS, Spec, parse

_CI = re.compile(r"(?:^|/)(?:\.github/workflows/[^/]+|\.gitlab-ci\.yml|\.gitlab-ci/[^/]+|\.circleci/[^/]+|\.travis\.yml"
                 r"|Jenkinsfile|azure-pipelines[^/]*\.yml|bitbucket-pipelines\.yml|\.buildkite/[^/]+|\.drone\.yml"
                 r"|\.woodpecker\.yml|\.woodpecker/[^/]+|\.pre-commit-config\.yaml)$")
# What makes a failing step or job count as passed, or never run
_WEAK = re.compile(r"\|\|\s*(?:true|:|exit\s+0|echo\b)|continue-on-error['\"]?\s*[:=]\s*['\"]?true"
                   r"|allow_failure['\"]?\s*[:=]\s*true"
                   r"|--exit-zero|\bif\s*:\s*['\"]?(?:false|\$\{\{\s*false\s*\}\})|\bwhen\s*:\s*never|\bset\s+\+e\b"
                   r"|--no-verify|\bexit\s+0\b|--passWithNoTests|\bSKIP_TESTS?\s*[:=]")
# Steps that test or check
_TESTS = re.compile(r"\b(?:pytest|py\.test|tox|nox|unittest|jest|vitest|mocha|ava|karma|playwright|cypress|go\s+test"
                    r"|go\s+vet|cargo\s+(?:test|nextest|clippy)|(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?(?:test|lint|check)"
                    r"|mvn\b[^\n]*\b(?:test|verify)|gradlew?\b[^\n]*\b(?:test|check)|make\s+(?:test|check|lint)|ctest"
                    r"|rspec|rake\s+test|phpunit|dotnet\s+test|mix\s+test|ruff|mypy|flake8|pylint|eslint|tsc|codeql"
                    r"|golangci-lint|pre-commit\s+run|swift\s+test|dun\s+check)\b|"
                    + f"(?i:{CHECKS.pattern.removeprefix('(?i)')})")  # and the checks gates.py knows


def is_ci(path: str) -> bool:
    return bool(_CI.search(path))


def weakens(old: str | None, new: str) -> str | None:
    """Why the new text of a CI file is weaker than the old one (a test step gone, a failure made to pass)."""
    old = old or ""
    added = _WEAK.findall(new)
    if len(added) > len(_WEAK.findall(old)):
        return f"makes a failure count as passed ({added[-1].strip()})"
    gone = [t for t in dict.fromkeys(" ".join(m.split()) for m in _TESTS.findall(old))
            if len(_TESTS.findall(new)) < len(_TESTS.findall(old)) and t not in " ".join(new.split())]
    return f"removes a test or check step ({gone[0]})" if gone else None


def read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(1 << 20)
    except OSError:
        return None


def shell_edit(facts: Facts, prog: str, args: list[Val]) -> None:
    """A command's edits of CI files: the file removed or moved out of CI (a rename within the workflows is free),
    emptied, lines that test deleted or replaced, or text added that makes failures pass."""
    if why := _why(facts, prog, args):
        facts.signals.add("ci-weaken")
        facts.notes["ci-weaken"] = f"why: {why}"


def _why(facts: Facts, prog: str, args: list[Val]) -> str | None:
    o = parse(args, SPECS.get(prog, SPECS["sed"]) if prog in ("sed", "gsed", "perl") else Spec())
    words = [v.text for v in o.operands]
    moved_within = (prog == "mv" or words[:1] == ["mv"]) and len(words) >= 2 and is_ci(words[-1]) and \
        ".github/workflows/" in words[-1]  # a workflow renamed
    if prog == "git" and words[:1] in (["rm"], ["mv"]) and "--cached" not in o.flags and not moved_within and any(
            _CI_DIR.search(w) for w in words[1:]):
        return f"git {words[0]} of CI files"
    if not moved_within and (gone := [e.path for e in facts.effects if e.op == "delete" and _CI_DIR.search(e.path)]):
        return f"removes or moves away {gone[0]}"
    paths = [e.path for e in facts.effects if e.op == "write" and is_ci(e.path)]
    if prog == "yq" and o.has("-i", "--inplace"):
        paths += [w for w in words[1:] if is_ci(w)]
    if not paths:
        return None
    if (prog == "truncate" and any(v in ("-s0", "--size=0") for v in [*o.flags, "".join(a.text for a in args[:2])])) \
            or (prog in ("cp", "install") and "/dev/null" in words[:-1]):
        return "empties a CI file"
    code = interpreter(prog, args) if prog not in ("sed", "gsed", "yq") else None
    scripts = [v.text for v in code.code] if code is not None and prog != "perl" else \
        [v.text for v in o.value("-e", "--expression")] or words[:1] if prog in ("sed", "gsed", "yq", "perl") else []
    for script in scripts:
        if m := _WEAK.search(script):
            return f"makes a failure count as passed ({m.group(0)})"
        if prog in ("sed", "gsed") and _deletes_tests(script, _texts(paths)):
            return "deletes lines of a CI file that test or check"
        if prog in ("sed", "gsed", "perl") and any(_TESTS.search(pat) and not _TESTS.search(rep)
                                                   for _, pat, rep in _SUBST.findall(script)):
            return "replaces a test or check step with one that does not test"
        if prog == "yq" and (re.search(r"\.if\s*\|?=\s*['\"]?false|\bdel\s*\(", script) or (
                re.search(r"\b(?:select|map)\s*\(", script) and _TESTS.search(script))):
            return "removes or turns off a CI job or step"
    return None


_SUBST = re.compile(r"s(?P<d>[/|#,:@!])((?:\\.|(?!(?P=d)).)*)(?P=d)((?:\\.|(?!(?P=d)).)*)(?P=d)")
_CI_DIR = re.compile(_CI.pattern.replace("(?:\\.github/workflows/[^/]+|", "(?:\\.github(?:/workflows(?:/[^/]+)?)?|"
                                                                      "\\.circleci|\\.buildkite|\\.woodpecker|\\.gitlab-ci|"
                                                                      "\\.github/dependabot\\.ya?ml|", 1))


_SED_D = re.compile(r"(?:^|[;\n}])\s*(?:(\d+)(?:,(\d+|\$))?|\$|/((?:\\.|[^/\\])*)/(?:,/[^/]*/)?)\s*(!?)\s*d")


def _deletes_tests(script: str, disk: str) -> bool:
    """A sed `d` whose lines (by pattern, or by number in the file on disk) hold a test or check step."""
    lines = disk.splitlines()
    for m in _SED_D.finditer(script):
        first, last, pattern, negated = m.groups()
        if negated or _TESTS.search(pattern or ""):
            return True
        if pattern is not None:
            try:
                chosen = [line for line in lines if re.search(pattern.replace("\\(", "(").replace("\\)", ")"), line)]
            except re.error:
                return bool(_TESTS.search(disk))
        else:
            start = int(first) - 1 if first else len(lines) - 1
            end = len(lines) if last == "$" else int(last) if last else start + 1
            chosen = lines[start:end]
        if any(_TESTS.search(line) for line in chosen):
            return True
    return False


def _texts(paths: list[str]) -> str:
    return "\n".join(read(p) or "" for p in paths)


def tool_edit(tool: str, path: str, tool_input: Mapping[str, object]) -> str | None:
    """Why a Write/Edit/MultiEdit of a CI file weakens it, or None."""
    if not is_ci(path):
        return None
    if tool == "Write":
        content = tool_input.get("content")
        return rewritten(path, content) if isinstance(content, str) else None
    edits = tool_input.get("edits") if tool == "MultiEdit" else [tool_input]
    for edit in edits if isinstance(edits, list) else []:
        if isinstance(edit, dict) and isinstance(edit.get("new_string"), str):
            old = edit.get("old_string")
            if why := weakens(old if isinstance(old, str) else "", str(edit["new_string"])):
                return why
    return None


def rewritten(path: str, text: str | None, append: bool = False) -> str | None:
    """A CI file written whole (printf ... > ci.yml, the Write tool), judged against the file on disk; a new file
    weakens nothing, and where the guard cannot see the directory either, a workflow whose steps all do nothing
    (`run: echo ok`) is a CI that checks nothing."""
    if text is None or not is_ci(path):
        return None
    if not text.strip():
        return "empties a CI file"
    old = read(path) if os.path.isfile(path) else None
    if old is not None or append:  # >> adds to what is there
        return weakens(old, (old or "") + text if append else text)
    if os.path.isdir(os.path.dirname(path)):
        return None  # a new workflow weakens none that was there
    steps = [s.strip().strip("'\"") for s in re.findall(r"^\s*(?:-\s*)?(?:run|script)\s*:\s*(.+)$", text, re.M)]
    if steps and all(_IDLE.fullmatch(s) for s in steps):
        return f"replaces the CI with steps that check nothing ({steps[0]})"
    return None


_IDLE = re.compile(r"(?:echo\b[^|;&]*|true|:|exit\s+0|\|)")
