"""`dun review`, `dun ack ID` and `dun review dismiss ID`, decisions that outlive a rebuild, and the prompt
section."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from history_support import dun, make_log, new_repo, write_run

from dun.config.loader import defaults_only
from dun.history.review import prompt_section
from dun.store.store import Store


def streak_repo(tmp_path: Path) -> Path:
    """A history whose detector files two items: a claim streak and a box attempted three times."""
    repo = new_repo(tmp_path / "repo")
    unverified = ({"kind": "unverified_completion", "detail": "check lint still fails", "check": "lint"},)
    logs = [make_log("r1", n, status="COMPLETE", task="lint", before=("lint",), after=("lint",), found=unverified)
            for n in (1, 2, 3)]
    logs += [make_log("r1", n, status="IN_PROGRESS", task="beta") for n in (4, 5, 6)]
    write_run(repo, "r1", logs)
    (repo / ".dun" / "tasks.json").write_text(json.dumps({"tasks": [{"text": "beta"}]}), encoding="utf-8")
    return repo


def listing(repo: Path, *flags: str) -> tuple[int, list[dict[str, object]]]:
    proc = dun(repo, "review", "--json", *flags)
    return proc.returncode, json.loads(proc.stdout)["items"]


def test_review_lists_open_items_and_exits_1_until_each_is_settled(tmp_path: Path) -> None:
    repo = streak_repo(tmp_path)
    proc = dun(repo, "review")
    assert proc.returncode == 1, proc.stderr
    code, items = listing(repo)
    assert code == 1 and [(i["pattern"], i["status"]) for i in items] == [("claim_streak", "open"),
                                                                         ("box_attempts", "open")]
    streak, box = (str(i["id"]) for i in items)
    assert streak in proc.stdout and "r1#1, r1#2, r1#3" in proc.stdout
    ack = dun(repo, "ack", streak[:5])  # a unique prefix is enough
    assert ack.returncode == 0 and ack.stdout.strip() == f"{streak} acked"
    assert dun(repo, "review", "dismiss", box).returncode == 0
    code, items = listing(repo)
    assert code == 0 and [(i["id"], i["status"]) for i in items] == [(streak, "acked")]
    assert [i["status"] for i in listing(repo, "--all")[1]] == ["acked", "dismissed"]


def test_an_unknown_item_is_a_usage_error(tmp_path: Path) -> None:
    repo = streak_repo(tmp_path)
    proc = dun(repo, "ack", "zzzz")
    assert proc.returncode == 2 and proc.stderr.strip() == "dun: no review item 'zzzz' (`dun review` lists them)"


def test_decisions_outlive_a_rebuild_and_a_lost_database(tmp_path: Path) -> None:
    repo = streak_repo(tmp_path)
    _, items = listing(repo)
    dun(repo, "review", "dismiss", str(items[0]["id"]))
    assert dun(repo, "history", "rebuild").returncode == 0
    for path in (repo / ".dun").glob("history.db*"):
        path.unlink()
    assert [(i["pattern"], i["status"]) for i in listing(repo, "--all")[1]] == [("claim_streak", "dismissed"),
                                                                               ("box_attempts", "open")]


def test_the_prompt_section_shows_open_and_acked_items_only(tmp_path: Path) -> None:
    repo = streak_repo(tmp_path)
    shown = defaults_only().settings.review
    assert prompt_section(Store(repo), shown) == ""  # nothing detected until the history syncs
    _, items = listing(repo)
    section = prompt_section(Store(repo), shown)
    assert section.startswith("dun found these patterns")
    assert "check lint still fails" in section and "'beta'" in section
    assert prompt_section(Store(repo), replace(shown, in_prompt=False)) == ""
    dun(repo, "ack", str(items[0]["id"]))
    dun(repo, "review", "dismiss", str(items[1]["id"]))
    section = prompt_section(Store(repo), None)
    assert "check lint" in section and "'beta'" not in section
    (repo / ".dun" / "history.db").write_bytes(b"garbage" * 100)
    for side in ("history.db-wal", "history.db-shm"):
        (repo / ".dun" / side).unlink(missing_ok=True)
    assert prompt_section(Store(repo), None) == ""  # a broken history never breaks the prompt


def test_the_repository_may_be_named_before_or_after_the_subcommand(tmp_path: Path) -> None:
    repo = streak_repo(tmp_path)
    _, items = listing(repo)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = dun(elsewhere, "review", "-C", str(repo), "ack", str(items[0]["id"]))  # the old spelling of `dun ack ID`
    assert proc.returncode == 0 and proc.stdout.strip() == f"{items[0]['id']} acked"
    assert "`dun review ack ID` is now `dun ack ID`" in proc.stderr
    assert dun(elsewhere, "review", "dismiss", str(items[1]["id"]), "-C", str(repo)).returncode == 0
    assert dun(elsewhere, "history", "-C", str(repo), "rebuild").returncode == 0
    assert [i["status"] for i in listing(repo, "--all")[1]] == ["acked", "dismissed"]
