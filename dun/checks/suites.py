"""`test-suites`: a test suite in the repository that no built-in check runs is a warning, not silence: without it
a JavaScript project on an unknown runner, or a Ruby or Java one, gets "nothing actionable" on a failing suite."""

from __future__ import annotations

from pathlib import Path

from dun.engine.checkapi import CheckContext, CheckSpec, CheckType
from dun.engine.hookspecs import hookimpl
from dun.engine.model import Item, Outcome, Status

NEXT = ("Add a command check that runs this suite, with a parser for its report (docs/plugins.md has one per "
        "runner), in .dun/plugins/; then silence this reminder with `plugins: {disabled: [test-suites]}` in "
        ".dun/config.yaml.")


def run(spec: CheckSpec, ctx: CheckContext) -> Outcome:
    return _answer(spec, ctx.root)


def _answer(spec: CheckSpec, root: Path) -> Outcome:
    from dun.checks.ecosystems import detect
    from dun.checks.unrun import NOT_INSTALLED, unrun_suites

    found = unrun_suites(root)
    covered = getattr(spec, "options", {}).get("covered") or []  # set by the catalog (dun/engine/catalog.py)
    unrun = [(marker, why) for marker, why in found if not _covered(marker, covered)]
    if unrun:
        items = [Item(f"{why}", marker) for marker, why in unrun]
        missing = [why for _, why in unrun if NOT_INSTALLED in why]
        advice = NEXT if len(missing) < len(unrun) else ""
        if missing:  # the checks exist; the machine lacks what they run
            advice = f"Install what is missing (or put it on PATH), then re-run `dun check`. {advice}".strip()
        return Outcome(Status.WARN, f"a test suite dun cannot run: {unrun[0][0]}: {unrun[0][1]}"[:200], items=items,
                       next=spec.next or advice)
    runnable = [eco.name for eco in detect(root) if eco.tests]
    runnable += sorted({marker.rpartition("/")[0] + "/" for marker, _ in found})  # each run by a check of the user's
    if not runnable:
        return Outcome(Status.SKIP, "no test suite found")
    return Outcome(Status.PASS, f"every test suite found has a check ({', '.join(runnable)})")


def _covered(marker: str, cwds: list[str]) -> bool:
    """Whether a check of the user's own runs in the directory of the project at `marker` (or in one inside it)."""
    where = marker.rpartition("/")[0]
    return bool(where) and any(cwd == where or cwd.startswith(f"{where}/") for cwd in cwds)


def inputs(spec: CheckSpec, ctx: CheckContext) -> list[str]:
    """Every path the answer looks at (each file read or tested, each directory listed), found by working the answer
    out once while recording them, and the source that works it out. A change that would make the run look
    elsewhere changes one of these: made before they are stamped, it is within the racy window and the result is
    not kept; made after, the stamps differ. So the result needs no second look at the tree
    (`CheckType.stamped`), whether the paths are tracked, untracked or ignored."""
    from dun.checks import ecosystems, gorunner, jsproject, looked, pyrunner, rustrunner, unrun

    _, seen = looked.reads(lambda: _answer(spec, ctx.root))
    return [*seen, *(str(m.__file__) for m in (ecosystems, jsproject, pyrunner, rustrunner, gorunner, looked, unrun))]


@hookimpl
def dun_check_types() -> list[CheckType]:
    return [CheckType("test-suites", "Test suites in the repository that no built-in check runs.", {}, run,
                      inputs=inputs, stamped=lambda spec: True)]
