"""What the top of the HTML report says: the last run's outcome in words and the command that goes on, the mission's
boxes (done of total, and after each iteration), the commits, the boxes ticked, and one row per iteration with the
paths of its prompt, answer and log. Read from the history database, the runs' state files and iteration logs (the
logs hold what the database does not: the commits' subjects and the files' paths)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dun.history.store import History
from dun.loop.report import resume_hint, stop_words, verdict
from dun.store.store import Store, read_json


@dataclass
class Row:
    """One iteration, as the report's table shows it."""

    label: str
    started: str
    duration_s: float | None
    cost: float | None
    claim: str  # the status block's STATUS and task, or why there is none
    ticked: list[str]
    commits: list[str]
    checks: str  # actionable checks before -> after
    verdict: str
    decision: str
    files: dict[str, Path]  # prompt, answer, stderr, log: the files that exist


@dataclass
class Night:
    run: dict[str, object] | None  # the newest run's row (runs table), None before any run
    state: dict[str, object] | None  # its state.json
    headline: str = ""
    why: str = ""
    resume: str | None = None
    boxes_total: int | None = None  # the mission's boxes now
    boxes_done: int | None = None
    boxes_before: int | None = None  # done before the first shown iteration
    progress: dict[str, int] = field(default_factory=dict)  # iteration label -> boxes done after it
    ticked: list[tuple[str, str]] = field(default_factory=list)  # (iteration label, box)
    commits: list[tuple[str, str]] = field(default_factory=list)  # (iteration label, "sha subject")
    rows: list[Row] = field(default_factory=list)


def run_dirs(store: Store) -> dict[str, Path]:
    """run id -> the directory holding its state.json and logs/ (`.dun/` for the current run, else its archive)."""
    found: dict[str, Path] = {}
    for directory in [*store.archived_runs(), store.dir]:
        state = read_json(directory / "state.json") or {}
        if isinstance(state.get("run_id"), str):
            found[state["run_id"]] = directory
    return found


def _logs(store: Store, directory: Path) -> list[tuple[dict[str, Any], Path]]:
    paths = store.iteration_log_paths(None if directory == store.dir else directory)
    return [(log, path) for _, path in paths if (log := read_json(path)) is not None]


def _mission(root: Path) -> tuple[int, int] | None:
    """(boxes done, boxes in all) of the mission files the last run was held to, as they are now."""
    from dun.trust import tasks

    ledger = tasks.load(root)
    if ledger is None:
        return None
    boxes = tasks.scan(root, ledger[0])
    return sum(1 for b in boxes if b.get("checked")), len(boxes)


def _files(log: dict[str, object], path: Path) -> dict[str, Path]:
    logs = path.parent
    n = log.get("iteration")
    named = {"prompt": f"iteration-{n}.prompt.md", "answer": f"iteration-{n}.out", "stderr": f"iteration-{n}.err"}
    found = {what: logs / name for what, name in named.items()
             if (logs / name).is_file() and (what != "stderr" or (logs / name).stat().st_size)}
    return {**found, "log": path}


def _row(label: str, log: dict[str, Any], path: Path) -> Row:
    from dun.history.rows import accepted_ticks

    block = log.get("status_block") or {}
    claim = (f"{block.get('status') or ''} {block.get('task_completed') or ''}".strip() if block else
             log.get("parse_outcome") or ("interrupted" if log.get("interrupted") else "no status block"))
    before = (log.get("checks_before") or {}).get("actionable")
    after = (log.get("checks_after") or {}).get("actionable")
    decision = log.get("decision") or {}
    commits = (log.get("progress") or {}).get("commits") or []
    cost = log.get("cost_usd")
    return Row(label=label, started=str(log.get("started_at") or "")[:19].replace("T", " "),
               duration_s=log.get("duration_s") if isinstance(log.get("duration_s"), int | float) else None,
               cost=cost if isinstance(cost, int | float) else None, claim=str(claim),
               ticked=accepted_ticks(log), commits=[str(c) for c in commits if isinstance(c, str)],
               checks=f"{'-' if before is None else before} → {'-' if after is None else after}",
               verdict=verdict(log),
               decision=" ".join(str(decision.get(k) or "") for k in ("action", "reason")).strip(),
               files=_files(log, path))


def collect_night(history: History, last_runs: int, several: bool) -> Night:
    """The outcome of the newest run, and the rows, commits and boxes of the newest `last_runs` runs."""
    from dun.report_html.series import label

    root = history.root
    runs = history.runs(limit=last_runs)
    newest = runs[-1] if runs else None
    store = Store(root)  # the one of this report
    dirs = run_dirs(store)
    state = read_json(dirs[newest["run_id"]] / "state.json") if newest and newest["run_id"] in dirs else None
    night = Night(run=newest, state=state)
    mission = _mission(root)
    if mission is not None:
        night.boxes_done, night.boxes_total = mission
    for run in runs:
        directory = dirs.get(run["run_id"])
        for log, path in _logs(store, directory) if directory is not None else []:
            at = label(run["run_id"], int(log.get("iteration") or 0), several)
            row = _row(at, log, path)
            night.rows.append(row)
            night.ticked += [(at, box) for box in row.ticked]
            night.commits += [(at, commit) for commit in row.commits]
    if night.boxes_done is not None:  # done before the shown runs = done now - ticked since (a box stays ticked)
        done = night.boxes_before = max(night.boxes_done - len(night.ticked), 0)
        for row in night.rows:
            done += len(row.ticked)
            night.progress[row.label] = min(done, night.boxes_total or done)
    if newest is not None:
        night.headline, night.why = _headline(newest, night), stop_words(state, newest.get("stop_reason"))
        night.resume = resume_hint(newest.get("stop_reason"))
    return night


def _headline(run: dict[str, object], night: Night) -> str:
    spent = f"${run.get('cost_usd') or 0:.2f}" + (f" of ${run['budget_usd']:.2f}" if run.get("budget_usd") else "")
    its = f"{run.get('iterations') or 0} iteration(s)"
    if run.get("status") == "complete":
        return f"Done: the mission is complete after {its}, {spent}."
    if run.get("status") == "running":
        return f"Still running: {its} so far, {spent}."
    done = night.boxes_total and night.boxes_done == night.boxes_total
    return f"Stopped after {its}, {spent}" + (", with every mission box done." if done else ".")

