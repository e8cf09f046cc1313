"""The task ratchet: the mission's boxes are recorded when a run starts; removing or rewording one is tampering,
and ticking one counts only when its evidence (a `verify:` command under it, or a check it names) holds."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from dun.checks.readers.markdown import parse_boxes
from dun.core.atomic import inside, write_inside, write_json_atomic
from dun.core.proc import run_streaming
from dun.core.textfiles import read_bytes, read_text
from dun.engine.model import Report
from dun.store.records import Box
from dun.store.store import Store, read_json
from dun.trust.claims import Discrepancy

VERIFY_TIMEOUT_S = 300
Confine = Callable[[list[str]], list[str]]


def ledger_path(root: Path) -> Path:
    return Store(root).tasks_path


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def scan(root: Path, files: list[str]) -> list[Box]:
    """Every box of the mission files, with its raw line (needed to restore it)."""
    tasks: list[Box] = []
    for rel in files:
        text, _ = read_text(root / rel, strict_utf8=True, root=root)
        if text is None:
            continue
        lines = text.split("\n")
        seen: dict[str, int] = {}
        for box in parse_boxes(text, rel):
            digest = _hash(box.text)
            seen[digest] = seen.get(digest, 0) + 1
            tasks.append({"id": f"{rel}#{digest}.{seen[digest]}", "file": rel, "line": box.line, "text": box.text,
                          "hash": digest, "checked": box.checked, "verify": box.verify,
                          "raw": lines[box.line - 1].rstrip("\r")})
    return tasks


def record(root: Path, files: list[str]) -> list[Box]:
    tasks = scan(root, files)
    save(root, files, tasks)
    return tasks


def _digests(root: Path, files: list[str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for rel in files:
        try:
            out[rel] = hashlib.sha256(read_bytes(root / rel, root=root)).hexdigest()
        except OSError:
            out[rel] = None
    return out


def save(root: Path, files: list[str], tasks: Sequence[Mapping[str, object]]) -> None:
    """The ledger, with the mission files' digests as dun leaves them: a later difference is someone else's."""
    write_json_atomic(ledger_path(root), {"schema_version": 1, "files": files, "tasks": tasks,
                                          "digests": _digests(root, files)})


def load(root: Path) -> tuple[list[str], list[Box]] | None:
    data = read_json(ledger_path(root))
    if not data or not isinstance(data.get("tasks"), list):
        return None
    return list(data.get("files") or []), data["tasks"]


def rebase(root: Path) -> list[str]:
    """Between iterations or runs: mission files changed since dun last recorded them are the operator's; their
    boxes become the ledger (a box's `verify:` kept where the new text drops it). Returns the files changed."""
    data = read_json(ledger_path(root))
    if not data or not isinstance(data.get("tasks"), list) or not isinstance(data.get("digests"), dict):
        return []
    files = list(data.get("files") or [])
    now = _digests(root, files)
    moved = [rel for rel in files if now.get(rel) != data["digests"].get(rel)]
    if moved:
        old = {t["id"]: t for t in data["tasks"]}
        current = [{**t, "verify": t.get("verify") or (old.get(t["id"]) or {}).get("verify")}
                   for t in scan(root, files)]
        save(root, files, current)
    return moved


def hold(root: Path) -> None:
    """After an iteration cut short (a crash, `kill -9`): the mission as it is now is not a baseline. The ledger
    keeps its boxes, so that the next iteration's conclusion holds what the killed agent did to them (a box removed
    comes back, a tick needs its evidence) instead of a rebase taking it as the operator's edit."""
    data = read_json(ledger_path(root))
    if data and isinstance(data.get("tasks"), list):
        save(root, list(data.get("files") or []), data["tasks"])


def _evidence(root: Path, task: Box, after: Report, confine: Confine | None = None) -> tuple[str, str]:
    """("pass" | "fail" | "none", detail) for a box ticked during the iteration."""
    verify = task.get("verify")
    if verify:
        # the command check's runner: its own process group, killed whole on timeout, output kept bounded; in the
        # loop's sandbox when it has one (the command is text the agent could have written)
        argv = ["sh", "-c", verify]
        res = run_streaming(confine(argv) if confine else argv, root, VERIFY_TIMEOUT_S, tail_lines=5)
        if res.timed_out:
            return "fail", f"verify: {task['verify']} timed out"
        tail = [line for line in res.tail if line.strip()][-1:]
        return ("pass", "") if res.exit_code == 0 else (
            "fail", f"verify: {task['verify']} exited {res.exit_code}{': ' + tail[0].strip() if tail else ''}")
    named = [r for r in after.results if r.id in task["text"].replace("`", " ").split()]
    if named:
        failing = [r.id for r in named if r in after.actionable()]
        return ("fail", f"check {failing[0]} still fails") if failing else ("pass", "")
    return "none", ""


def compare(root: Path, ledger: list[Box], files: list[str], after: Report,
            confine: Confine | None = None) -> tuple[list[Discrepancy], dict[str, list[str]], list[Box]]:
    """(discrepancies, facts for the log, the new ledger with the accepted changes)."""
    current = scan(root, files)
    now_by_id = {t["id"]: t for t in current}
    old_ids = {t["id"] for t in ledger}
    found: list[Discrepancy] = []
    facts: dict[str, list[str]] = {"added": [], "unticked": [], "ticked": [], "unverified": []}
    accepted = []
    for task in ledger:
        new = now_by_id.get(task["id"])
        if new is None:
            found.append(Discrepancy("task_tampered", f"box removed or reworded: {task['file']}:{task['line']} "
                                     f"'{task['text']}'", task=task))
            accepted.append(task)  # the ledger keeps the original
            continue
        if new["checked"] and not task["checked"]:
            verdict, detail = _evidence(root, task, after, confine)
            if verdict == "fail":
                found.append(Discrepancy("unverified_completion", f"box ticked but its evidence fails: "
                                         f"{task['file']}:{new['line']} '{task['text']}' ({detail})",
                                         task={**task, "line": new["line"], "raw": new["raw"]}, flip=True))
                accepted.append(task)
                continue
            facts["ticked"].append(task["text"])
            if verdict == "none":
                facts["unverified"].append(task["text"])
        elif task["checked"] and not new["checked"]:
            facts["unticked"].append(task["text"])
        accepted.append({**new, "verify": new.get("verify") or task.get("verify")})
    for task in current:
        if task["id"] not in old_ids:
            facts["added"].append(task["text"])
            accepted.append(task)
    return found, facts, accepted


def _positions(text: str, rel: str) -> dict[str, int]:
    """Box hash (with its occurrence) -> 0-based line index, for the boxes in `text`."""
    out: dict[str, int] = {}
    seen: dict[str, int] = {}
    for box in parse_boxes(text, rel):
        digest = _hash(box.text)
        seen[digest] = seen.get(digest, 0) + 1
        out[f"{digest}.{seen[digest]}"] = box.line - 1
    return out


def _box(found: Discrepancy) -> Box:
    """The box a box's discrepancy (task_tampered, unverified_completion of a box) is about."""
    assert found.task is not None, found.kind
    return found.task


def _restore_file(lines: list[str], rel: str, items: list[Discrepancy], ledger: list[Box]) -> list[str]:
    """Untick unverified flips, then put each missing box back after the nearest surviving box that preceded it
    at the start (replacing a new box standing exactly there: a rewording)."""
    for d in items:
        if d.flip:
            at = _box(d)["line"] - 1  # a flip is located in the current file
            if 0 <= at < len(lines):
                lines[at] = lines[at].replace("[x]", "[ ]", 1).replace("[X]", "[ ]", 1)
    missing = {_box(d)["id"] for d in items if not d.flip}
    order = [t for t in ledger if t["file"] == rel]
    known = {t["id"].split("#", 1)[1] for t in order}
    for index, task in enumerate(order):
        if task["id"] not in missing:
            continue
        where = _positions("\n".join(lines), rel)
        before = [where[t["id"].split("#", 1)[1]] for t in order[:index] if t["id"].split("#", 1)[1] in where]
        after = [where[t["id"].split("#", 1)[1]] for t in order[index + 1:] if t["id"].split("#", 1)[1] in where]
        at = before[-1] + 1 if before else (after[0] if after else len(lines))
        newcomers = {pos for key, pos in where.items() if key not in known}
        if at in newcomers and (not after or at < after[0]):
            lines[at] = task["raw"]  # reworded in place
        else:
            lines.insert(at, task["raw"])
    return lines


def restore(root: Path, tampered: list[Discrepancy], ledger: list[Box],
            start_head: str | None = None) -> list[str]:
    """Put removed or reworded boxes back and untick unverified flips, editing only those lines; returns the
    files changed. The agent's other edits in the same files stay. A deleted file comes back whole."""
    by_file: dict[str, list[Discrepancy]] = {}
    for d in tampered:
        by_file.setdefault(_box(d)["file"], []).append(d)
    changed = []
    for rel, items in by_file.items():
        path = inside(root, rel)
        if not path.exists() and start_head:
            from dun.core.git import git

            show = git(root, "show", f"{start_head}:{rel}", check=False)
            if show.returncode == 0:
                write_inside(root, rel, show.stdout)
                changed.append(rel)
                continue
        text, _ = read_text(path, strict_utf8=True, root=root)
        trailing = (text or "").endswith("\n") or not text
        lines = (text or "").split("\n")
        if trailing and lines and lines[-1] == "":
            lines.pop()
        lines = _restore_file(lines, rel, items, ledger)
        write_inside(root, rel, ("\n".join(lines) + ("\n" if trailing else "")).encode("utf-8"))
        changed.append(rel)
    return changed
