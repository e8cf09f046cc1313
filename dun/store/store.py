"""`Store`: the one owner of a repository's `.dun/` directory. Every path under it is named here, and every record
is read and written here: atomically, typed, versioned. Other modules ask the store; none spells `.dun/...`."""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, cast

from dun.core.atomic import make_private_dir, write_bytes_atomic, write_json_atomic, write_text_atomic
from dun.core.errors import DunError
from dun.core.redact import Redactor
from dun.core.resources import data_dir
from dun.core.textfiles import read_bytes
from dun.core.timefmt import now_iso
from dun.store.layout import CACHE, DIR, PAPERS, TEMPLATES, config_path, plugins_dir
from dun.store.records import (
    LIVE_SCHEMA_VERSION,
    DetectorRecord,
    Handoff,
    IterationLog,
    LiveRecord,
    StateRecord,
    state_problem,
)
from dun.store.state import LoopState

RESERVE_BYTES = 256 * 1024
MAX_RECORD_BYTES = 16 * 1024 * 1024  # dun's own records are kilobytes; a larger one is not ours
MAX_PAPERS_BYTES = 64 * 1024 * 1024  # papers.max_papers papers of a few KB each (title, abstract, authors)
COCHANGE_KIND = "cochange"
DETECTOR_KIND = "detector"
COCHANGE_CAP = 64 * 1024 * 1024  # a 5,000-commit history makes a few MB
_ITERATION_FILE = re.compile(r"iteration-(\d+)\.json")
_OUT_FILE = re.compile(r"iteration-\d+\.out")


class StateCorrupt(DunError):
    """`.dun/state.json` cannot be resumed; it was moved aside and nothing else was touched."""


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object from a dun file, or None when it is missing or unreadable (a torn file loses nothing)."""
    try:
        data = json.loads(read_bytes(path, MAX_RECORD_BYTES))
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _redact_in_place(record: Any, redactor: Redactor) -> None:
    """The record with its secrets redacted, in place; untouched (nested objects too) when it holds none."""
    clean = redactor.redact_data(dict(record))
    if clean != record:
        record.clear()
        record.update(clean)


GITIGNORE_MARK = "# dun-gitignore "


def _gitignore_version(text: str) -> int:
    first = text.split("\n", 1)[0]
    if not first.startswith(GITIGNORE_MARK):
        return 0
    word = first[len(GITIGNORE_MARK):].split(":", 1)[0].strip()
    return int(word) if word.isdigit() else 0


@functools.cache
def _template() -> str:
    return (data_dir("templates") / "dun.gitignore").read_text(encoding="utf-8")


def gitignore_text(previous: str | None = None) -> str:
    """`.dun/.gitignore` as this dun writes it; the lines a person added to `previous` (not dun's own, of any
    version) are kept at the end."""
    template = _template()
    if not previous:
        return template
    ours = set(template.splitlines()) | OLD_GITIGNORE_LINES
    kept = [line for line in previous.splitlines() if line.strip() and line not in ours
            and not line.startswith(GITIGNORE_MARK)]
    return template + ("\n# kept from the previous file\n" + "\n".join(kept) + "\n" if kept else "")


def refresh_gitignore(path: Path) -> bool:
    """Write `.dun/.gitignore` when it is missing or older than this dun's (so every file dun writes, temporary ones
    too, stays out of `git status`); True when it was written. A link there is an error, never written through."""
    current = _gitignore_version(_template())
    if path.is_symlink():
        raise DunError(f"{path} is a link; dun writes its .gitignore only as a regular file: remove the link")
    try:
        previous = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        previous = None
    if previous is not None and _gitignore_version(previous) >= current:
        return False
    write_text_atomic(path, gitignore_text(previous))
    os.chmod(path, 0o644)  # a file meant to be committed: readable like the rest of the tree
    return True


# every line of the .gitignore dun wrote before it carried a version (refreshed, never "kept")
OLD_GITIGNORE_LINES = {
    "logs/", "cache/", "archive/", "state.json", "state.json.corrupt-*", "handoff.json", "iterate.json",
    "tasks.json", "fingerprint.json", "REPORT.md", "loop.lock", "STOP", "history.db", "history.db-*",
    "history.db.corrupt-*", "reports/", "review.json", "review.lock", "report.html",
}


class Store:
    """The `.dun/` directory of one repository (or worktree)."""

    def __init__(self, root: Path, redactor: Redactor | None = None) -> None:
        self.root = root
        self.dir = root / DIR
        # what every record written here is cleaned of: the command's (`Config.redactor`, with the repository's
        # `secrets.patterns`); a store made without a config redacts the well-known formats
        self.redactor = redactor or Redactor()
        # a dry run's store (`dun loop --dry-run` changes nothing): what only speeds later runs up is not written
        self.dry_run = False

    # -- paths ---------------------------------------------------------------------------------------------
    @property
    def state_path(self) -> Path:
        return self.dir / "state.json"

    @property
    def logs_dir(self) -> Path:
        return self.dir / "logs"

    @property
    def live_path(self) -> Path:
        """What the loop is doing now (`dun watch`)."""
        return self.dir / "live.json"

    @property
    def stop_path(self) -> Path:
        return self.dir / "STOP"

    @property
    def lock_path(self) -> Path:
        return self.dir / "loop.lock"

    @property
    def cache_dir(self) -> Path:
        return self.root / CACHE

    @property
    def handoff_path(self) -> Path:
        return self.dir / "handoff.json"

    @property
    def iterate_path(self) -> Path:
        """Where the last `dun iterate` started: the base of `dun respond`'s git facts and the next diff stat."""
        return self.dir / "iterate.json"

    @property
    def report_path(self) -> Path:
        return self.dir / "REPORT.md"

    @property
    def fingerprint_path(self) -> Path:
        return self.dir / "fingerprint.json"

    @property
    def tasks_path(self) -> Path:
        return self.dir / "tasks.json"

    @property
    def guard_log_path(self) -> Path:
        return self.logs_dir / "guard.jsonl"

    @property
    def archive_dir(self) -> Path:
        return self.dir / "archive"

    @property
    def config_path(self) -> Path:
        return config_path(self.root)

    @property
    def plugins_dir(self) -> Path:
        return plugins_dir(self.root)

    @property
    def templates_dir(self) -> Path:
        return self.root / TEMPLATES

    @property
    def history_db(self) -> Path:
        """The run history (SQLite, rebuilt from the JSON logs by `dun history rebuild`)."""
        return self.dir / "history.db"

    @property
    def review_path(self) -> Path:
        return self.dir / "review.json"

    @property
    def report_html_path(self) -> Path:
        """`dun report` without -o."""
        return self.dir / "report.html"

    @property
    def reports_dir(self) -> Path:
        return self.dir / "reports"

    @property
    def notify_path(self) -> Path:
        """When each kind of notification was last sent, and what was held back since (dun/notify/throttle.py)."""
        return self.dir / "notify.json"

    @property
    def cochange_path(self) -> Path:
        """The co-change index `dun hints` and the prompt's hints read (dun/hints/index.py): rebuilt when unusable."""
        return self.dir / "cochange.idx"

    @property
    def detector_path(self) -> Path:
        """The deficiency detector's state, which the shell driver's processes resume (dun/history/resume.py)."""
        return self.dir / "detector.state"

    @property
    def fleet_path(self) -> Path:
        """This loop's id in the fleet store and its own calls and costs of the last hours, to catch a store up
        (dun/fleet/link.py)."""
        return self.dir / "fleet.json"

    @property
    def events_log(self) -> Path:
        return self.logs_dir / "events.jsonl"

    @property
    def papers_path(self) -> Path:
        """The paper watch's papers, one JSON object a line (`dun papers`)."""
        return self.root / PAPERS

    def read_papers(self) -> tuple[list[dict[str, object]], int]:
        """The papers recorded (JSON objects with a string `id`, the first of each id) and how many lines were not
        such an object (a torn or hand-edited line is skipped, never fatal)."""
        try:
            data = read_bytes(self.papers_path, MAX_PAPERS_BYTES)
        except FileNotFoundError:
            return [], 0
        except OSError as exc:
            raise DunError(f"{self.papers_path}: cannot read: {exc.strerror or exc}") from None
        papers, unreadable = _parse_papers(data)
        return list(papers.values()), len(unreadable)

    def write_papers(self, papers: list[dict[str, Any]]) -> None:
        """Replace the papers, atomically, one per id (the first kept). The lines of the file that are not a paper
        (torn or hand-edited) are kept as they were, at the end: the user fixes them, dun never drops them. Called
        under `papers_lock`, so the file read here is the one the papers were read from."""
        self.ensure()
        try:
            _, kept = _parse_papers(read_bytes(self.papers_path, MAX_PAPERS_BYTES))
        except OSError:  # none yet, or not readable: read_papers said so already
            kept = []
        seen: set[str] = set()
        lines = []
        for paper in papers:
            if paper["id"] not in seen:
                seen.add(paper["id"])
                lines.append(json.dumps(paper, ensure_ascii=False, sort_keys=True) + "\n")
        write_bytes_atomic(self.papers_path, "".join(lines).encode("utf-8") + b"".join(line + b"\n" for line in kept))

    @contextlib.contextmanager
    def papers_lock(self) -> Iterator[None]:
        """Held while papers are read, changed and written back, so two `dun papers` commands lose no change."""
        import fcntl

        self.ensure()
        path = self.dir / "papers.lock"
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as exc:  # a link (never followed), a directory, a .dun/ that cannot be written: one line
            why = "a symbolic link, which dun does not follow" if exc.errno == errno.ELOOP else exc.strerror or exc
            raise DunError(f"{path}: cannot lock the papers: {why}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def refuse_links(self) -> None:
        """Raise UnsafePathError when `.dun/`, a file in it, or a file in the directories dun writes into is a
        link: dun's records, logs and database are never written through one (it could aim them out of the
        repository)."""
        from dun.core.atomic import inside

        top = self.dir.name
        if not os.path.lexists(self.dir):
            return
        inside(self.dir.parent, top)
        for sub in ("", "logs", "cache", "reports"):
            try:
                entries = list(os.scandir(self.dir / sub))
            except OSError:
                continue
            for entry in entries:
                if entry.is_symlink():
                    inside(self.dir.parent, f"{top}/{sub}/{entry.name}" if sub else f"{top}/{entry.name}")

    def write_prompt(self, n: int, prompt: str) -> Path:
        """`.dun/logs/iteration-N.prompt.md` (private; the prompt was redacted when it was rendered)."""
        path = self.iteration_file(n, ".prompt.md")
        write_text_atomic(path, self.redactor.redact(prompt), private=True)
        return path

    def iteration_file(self, n: int, suffix: str) -> Path:
        """`.dun/logs/iteration-N<suffix>`: `.json` the log, `.prompt.md`, `.out` (stdout), `.err` (stderr)."""
        return self.logs_dir / f"iteration-{int(n)}{suffix}"

    def ensure(self) -> Path:
        """`.dun/`, with a .gitignore for dun's runtime files when it has none, so they never show as work. A `.dun`
        that is a link (a cloned repository can carry one) raises UnsafePathError: no command writes through it."""
        if os.path.islink(self.dir):
            from dun.core.atomic import inside

            inside(self.dir.parent, self.dir.name)
        if not self.dir.is_dir():
            make_private_dir(self.dir)
        elif self.dir.stat().st_mode & 0o077:  # made by an older dun: its records become private too
            with contextlib.suppress(OSError):
                os.chmod(self.dir, 0o700)
        refresh_gitignore(self.dir / ".gitignore")
        return self.dir

    # -- the loop state ------------------------------------------------------------------------------------
    def read_state(self) -> LoopState | None:
        """The state of the current run; None when no run ever started. A file that is not a state this version can
        resume raises StateCorrupt and stays where it is: a run is never silently restarted over it."""
        problem: str | None = None
        try:
            data = json.loads(read_bytes(self.state_path, MAX_RECORD_BYTES))
        except FileNotFoundError:
            return None
        except OSError as exc:
            problem = f"cannot read it: {exc.strerror or exc}"
        except json.JSONDecodeError as exc:
            problem = f"not JSON ({exc.msg} at line {exc.lineno})"
        except (ValueError, RecursionError) as exc:
            problem = f"not JSON ({str(exc)[:80] or type(exc).__name__})"
        else:
            problem = state_problem(data)
        if problem is not None:
            raise StateCorrupt(f"{self.state_path.relative_to(self.root)} cannot be resumed: {problem}; "
                               "`dun loop --fresh` keeps it aside and starts a new run (logs are archived)")
        return LoopState.from_record(cast(StateRecord, data))  # files from older versions gain the new keys

    def peek_state(self) -> LoopState | None:
        """The state for a display (`dun fleet status`, `dun service status`): None when missing or unreadable."""
        try:
            return self.read_state()
        except StateCorrupt:
            return None

    def set_aside_state(self) -> Path | None:
        """`--fresh` over a corrupt state: keep the file for a person (`state.json.corrupt-TIME`), out of the way."""
        if not self.state_path.exists():
            return None
        kept = self.state_path.with_name(f"state.json.corrupt-{time.strftime('%Y%m%dT%H%M%S')}")
        os.replace(self.state_path, kept)
        return kept

    def write_state(self, state: LoopState) -> None:
        state.updated_at = now_iso()
        self.ensure()
        record = state.to_record()
        clean = cast(StateRecord, self.redactor.redact_data(record))
        if clean != record:  # what the run keeps in memory is what is on disk: the history gets no secret either
            state.update_from(clean)
        write_json_atomic(self.state_path, clean, private=True)

    def archive_run(self, run_id: str | None) -> Path | None:
        """A new run moves the previous run's logs, state and report aside, never deleting them."""
        if run_id is None and not self.logs_dir.exists():
            return None
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", run_id or "")[:64].strip(".") or time.strftime("%Y%m%dT%H%M%S")
        target = self.archive_dir / safe
        if target.exists():  # a run id seen before (a restored state): never merge two runs' logs
            target = self.archive_dir / f"{safe}-{time.strftime('%Y%m%dT%H%M%S')}"
        make_private_dir(target)
        import shutil

        for path in (self.logs_dir, self.state_path, self.report_path, self.handoff_path, self.iterate_path):
            if path.exists():
                shutil.move(str(path), str(target / path.name))
        return target

    # -- the live record -----------------------------------------------------------------------------------
    def read_live(self) -> LiveRecord | None:
        """The live record, or None when there is none or it is of another version (a display, never a decision)."""
        data = read_json(self.live_path)
        if data is None or data.get("schema_version") != LIVE_SCHEMA_VERSION:
            return None
        if not _OUT_FILE.fullmatch(str(data.get("out_file") or "iteration-0.out")):
            data["out_file"] = None  # only ever an iteration's output in logs/: a reader never follows a path elsewhere
        return cast(LiveRecord, data)

    def write_live(self, record: LiveRecord) -> None:
        """Atomic but not synced: a display rewritten at every phase must not cost the loop a disk flush each time
        (a torn file after a power loss reads as no record). It holds no free text (names, numbers, enumerated
        reasons; the agent's output stays in its `.out` file): nothing to redact."""
        write_json_atomic(self.live_path, record, private=True, durable=False)

    # -- iteration logs ------------------------------------------------------------------------------------
    def read_log(self, n: int) -> IterationLog | None:
        return cast(IterationLog | None, read_json(self.iteration_file(n, ".json")))

    def write_log(self, log: IterationLog) -> None:
        _redact_in_place(log, self.redactor)
        write_json_atomic(self.iteration_file(int(log["iteration"]), ".json"), log, private=True)

    def iteration_logs(self) -> list[IterationLog]:
        """Every readable `.dun/logs/iteration-N.json`, in iteration order."""
        found: list[IterationLog] = []
        for number, path in self.iteration_log_paths():
            log = read_json(path)
            if log is not None:
                log.setdefault("iteration", number)
                found.append(cast(IterationLog, log))
        return sorted(found, key=lambda log: int(log.get("iteration") or 0))

    def iteration_log_paths(self, run_dir: Path | None = None) -> list[tuple[int, Path]]:
        """(N, path) of every `iteration-N.json` of the current run's logs, or of an archived run's directory
        (`archived_runs`), in iteration order."""
        logs = self.logs_dir if run_dir is None else run_dir / self.logs_dir.name
        found = []
        for path in logs.glob("iteration-*.json") if logs.is_dir() else []:
            match = _ITERATION_FILE.fullmatch(path.name)
            if match:
                found.append((int(match.group(1)), path))
        return sorted(found)

    def archived_runs(self) -> list[Path]:
        """The directories `archive_run` moved earlier runs' logs into, by name."""
        if not self.archive_dir.is_dir():
            return []
        return sorted(p for p in self.archive_dir.iterdir() if p.is_dir() and not p.is_symlink())

    # -- the co-change index -------------------------------------------------------------------------------
    def read_cochange(self, accept: Callable[[object], object]) -> object:
        """The index's payload passed through `accept`, or None when the file is missing, not a regular file, too
        large, of another version, or `accept` refuses it (dun/core/cache/file.py reads it)."""
        from dun.core.cache.file import CacheFile

        return CacheFile(self.cochange_path, COCHANGE_KIND, COCHANGE_CAP).load(accept)

    def write_cochange(self, payload: object) -> bool:
        """Write the index atomically; False when it could not be (too large, a read-only or full disk) or this is a
        dry run's store."""
        from dun.core.cache.file import CacheFile

        if self.dry_run:
            return False
        self.ensure()
        return CacheFile(self.cochange_path, COCHANGE_KIND, COCHANGE_CAP).store(payload)

    def read_detector(self) -> object:
        """The detector's record (`DetectorRecord`, checked by dun/history/resume.py), or None when the file is
        missing, not a regular file, too large or of another version."""
        from dun.core.cache.file import CacheFile

        return CacheFile(self.detector_path, DETECTOR_KIND, MAX_RECORD_BYTES).load(lambda payload: payload)

    def write_detector(self, record: DetectorRecord) -> bool:
        """Write the detector's record atomically; False when it could not be (too large, a read-only or full disk)
        or this is a dry run's store."""
        from dun.core.cache.file import CacheFile

        if self.dry_run:
            return False
        self.ensure()
        return CacheFile(self.detector_path, DETECTOR_KIND, MAX_RECORD_BYTES).store(record)

    # -- handoff and the iterate base ----------------------------------------------------------------------
    def read_handoff(self) -> Handoff | None:
        return cast(Handoff | None, read_json(self.handoff_path))

    def write_handoff(self, handoff: Handoff) -> Path:
        self.ensure()
        write_json_atomic(self.handoff_path, self.redactor.redact_data(handoff), private=True)
        return self.handoff_path

    def read_iterate(self) -> dict[str, Any] | None:
        return read_json(self.iterate_path)

    def write_iterate(self, record: Mapping[str, object]) -> None:
        self.ensure()
        write_json_atomic(self.iterate_path, self.redactor.redact_data(record), private=True)

    # -- STOP ----------------------------------------------------------------------------------------------
    def request_stop(self, now: bool) -> None:
        self.ensure()
        write_text_atomic(self.stop_path, "now\n" if now else "after-iteration\n")

    def stop_requested(self) -> bool:
        return self.stop_path.exists()

    def stop_now(self) -> bool:
        """`dun stop --now`: kill the agent instead of waiting for the iteration to end."""
        try:
            return self.stop_path.read_text(errors="replace").strip() == "now"
        except OSError:
            return False

    # -- room for the last writes on a full disk ------------------------------------------------------------------
    @property
    def reserve_path(self) -> Path:
        return self.cache_dir / "disk-reserve"

    def reserve_space(self) -> None:
        """Keep RESERVE_BYTES of the disk for the stop, the state and the report: given back when the disk fills."""
        make_private_dir(self.cache_dir)
        with contextlib.suppress(OSError), self.reserve_path.open("wb") as fh:
            fh.write(b"\0" * RESERVE_BYTES)
            fh.flush()
            os.fsync(fh.fileno())

    def release_space(self) -> None:
        with contextlib.suppress(OSError):
            self.reserve_path.unlink()

    def consume_stop(self) -> None:
        self.stop_path.unlink(missing_ok=True)  # consumed: the next start runs

    def write_report(self, text: str) -> Path:
        write_text_atomic(self.report_path, self.redactor.redact(text), private=True)
        return self.report_path

    def files(self) -> Iterator[Path]:
        """Every file under `.dun/` (for tests and `dun doctor`)."""
        yield from (p for p in self.dir.rglob("*") if p.is_file())


def _parse_papers(data: bytes) -> tuple[dict[str, dict[str, object]], list[bytes]]:
    """The papers of `.dun/papers.jsonl` (JSON objects with a string `id`, the first of each id) and the lines that
    are not one, as they were (blank lines dropped)."""
    papers: dict[str, dict[str, object]] = {}
    unreadable: list[bytes] = []
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            record = None
        if isinstance(record, dict) and isinstance(record.get("id"), str) and record["id"]:
            papers.setdefault(record["id"], record)
        else:
            unreadable.append(line)
    return papers, unreadable
