"""The co-change scoring (dun/hints/graph.py): strength, recency decay, the second hop and its fan-out penalty, huge
changes, renames and deletions, and a bounded answer."""

from __future__ import annotations

import math

import pytest

from dun.hints.graph import CHECK_PREFIX, HOP, Graph


def paths(graph: Graph, seed: str, limit: int = 5) -> list[str]:
    return [h.path for h in graph.hints([seed], limit)]


def test_files_changed_together_more_often_rank_higher() -> None:
    g = Graph(half_life=10**9)
    for _ in range(3):
        g.add(["a.py", "test_a.py"])
    g.add(["a.py", "b.py"])
    found = g.hints(["a.py"])
    assert [h.path for h in found] == ["test_a.py", "b.py"]
    assert found[0].direct == pytest.approx(0.75) and found[1].direct == pytest.approx(0.25)
    assert found[0].via is None


def test_a_pair_in_a_large_change_links_weaker_than_in_a_small_one() -> None:
    g = Graph(half_life=10**9)
    g.add(["a.py", "small.py"])
    g.add(["a.py", "big.py", "c.py", "d.py", "e.py"])
    found = {h.path: h.direct for h in g.hints(["a.py"], 10)}
    assert found["small.py"] == pytest.approx(0.5)
    assert found["big.py"] == pytest.approx(0.5 / 4)


def test_recent_links_outweigh_older_ones_by_the_half_life() -> None:
    g = Graph(half_life=4)
    g.add(["a.py", "old.py"])
    for n in range(3):
        g.add([f"other{n}.py"])  # the clock is changes, whatever they touch
    g.add(["a.py", "new.py"])
    found = {h.path: h.direct for h in g.hints(["a.py"])}
    # four changes apart: the older link counts half of the newer one
    assert found["old.py"] / found["new.py"] == pytest.approx(0.5)
    assert paths(g, "a.py") == ["new.py", "old.py"]
    without_decay = Graph(half_life=10**9)
    without_decay.add(["a.py", "old.py"])
    without_decay.add(["a.py", "new.py"])
    assert [h.direct for h in without_decay.hints(["a.py"])] == pytest.approx([0.5, 0.5])


def test_the_weights_are_rescaled_before_they_overflow_and_keep_their_ranking() -> None:
    g = Graph(half_life=1)
    g.add(["a.py", "old.py"])
    for n in range(1100):  # exp(1100 * ln 2) overflows a float without the rescale
        g.add([f"f{n}.py"])
    g.add(["a.py", "new.py"])
    g.add(["a.py", "new.py"])
    g.add(["a.py", "newer.py"])
    assert g.base > 0
    assert all(math.isfinite(c) for c in g.count) and all(math.isfinite(w) for row in g.edges for w in row.values())
    # 1,100 half-lives ago is nothing at all: a link decayed to zero is no hint; at a half-life of one change,
    # newer's one link (weight 4) outweighs new's two (2 + 1) made just before
    assert paths(g, "a.py") == ["newer.py", "new.py"]


def test_a_second_hop_finds_a_file_that_never_changed_with_the_seed() -> None:
    g = Graph(half_life=10**9)
    g.add(["a.py", "b.py"])
    g.add(["b.py", "c.py"])
    found = g.hints(["a.py"])
    assert [h.path for h in found] == ["b.py", "c.py"]
    assert found[1].direct == 0 and found[1].via == "b.py"
    assert 0 < found[1].score < found[0].score
    # conf(a->b) = 1, conf(b->c) = 1/2, b has two partners: 0.5 * 1 * 0.5 / (1 + ln 3)
    assert found[1].score == pytest.approx(HOP * 0.5 / (1 + math.log(3)))


def test_a_hub_passes_on_less_than_a_file_with_few_partners() -> None:
    g = Graph(half_life=10**9, max_files=40)
    g.add(["a.py", "hub.py"])
    g.add(["a.py", "quiet.py"])
    for _ in range(4):
        g.add(["hub.py", "via_hub.py"])
        g.add(["quiet.py", "via_quiet.py"])
    g.add(["hub.py", *(f"noise{n}.py" for n in range(30))])  # one change: the hub's links stay as strong
    found = {h.path: h for h in g.hints(["a.py"], 50)}
    conf_hub, conf_quiet = 4 / 6, 4 / 5  # the hub's changes: a, 4 with via_hub, the noisy one
    assert found["via_hub.py"].score == pytest.approx(HOP * 0.5 * conf_hub / (1 + math.log(1 + 32)))
    assert found["via_quiet.py"].score == pytest.approx(HOP * 0.5 * conf_quiet / (1 + math.log(1 + 2)))
    # without the penalty the two would be within 20% of each other; with it the hub's is less than half
    assert found["via_hub.py"].score < 0.5 * found["via_quiet.py"].score
    assert found["via_hub.py"].via == "hub.py" and found["via_quiet.py"].via == "quiet.py"


def test_the_answer_is_bounded_and_never_names_a_seed_a_check_or_a_deleted_file() -> None:
    g = Graph(half_life=10**9)
    g.add([f"f{n}.py" for n in range(20)])
    g.add(["f0.py", "gone.py"], tags=[CHECK_PREFIX + "pytest"])
    g.delete("gone.py")
    found = paths(g, "f0.py", 3)
    assert len(found) == 3
    assert "f0.py" not in found and "gone.py" not in found
    assert not any(p.startswith(CHECK_PREFIX) for p in paths(g, "f0.py", 100))
    assert paths(g, "f0.py", 0) == [] and paths(g, "unknown.py") == []
    g.add(["gone.py", "f1.py"])  # changed again: it exists again
    assert "gone.py" in paths(g, "f1.py", 100)


def test_a_change_of_too_many_files_links_nothing_but_counts() -> None:
    g = Graph(half_life=10**9, max_files=3)
    g.add(["a.py", "b.py"])
    assert g.add(["a.py", "c.py", "d.py", "e.py"]) is False
    assert paths(g, "a.py") == ["b.py"]
    assert g.hints(["a.py"])[0].direct == pytest.approx(0.5)  # a's other change still counts against the link
    assert "c.py" not in g.ids  # a file seen only in such a change is no node: an import of 50,000 files adds none


def test_a_rename_carries_the_links_to_the_new_name() -> None:
    g = Graph(half_life=10**9)
    g.add(["old.py", "test.py"])
    g.rename("old.py", "new.py")
    assert paths(g, "new.py") == ["test.py"]
    assert paths(g, "test.py") == ["new.py"]
    assert paths(g, "old.py") == []
    g.add(["other.py", "test.py"])
    g.add(["other.py", "x.py"])
    g.rename("other.py", "new.py")  # onto a known name: the links merge
    assert set(paths(g, "new.py")) == {"test.py", "x.py"}
    assert "other.py" not in paths(g, "test.py", 10)


def test_a_check_links_to_the_files_changed_for_it() -> None:
    g = Graph(half_life=10**9)
    g.add(["src/a.py", "tests/test_a.py"], tags=[CHECK_PREFIX + "pytest"], link_files=False)
    assert set(paths(g, CHECK_PREFIX + "pytest")) == {"src/a.py", "tests/test_a.py"}
    assert paths(g, "src/a.py") == ["tests/test_a.py"]  # only through the check: a second hop
    assert g.hints(["src/a.py"])[0].direct == 0


def test_a_second_hop_reads_its_partners_counts_as_they_are_now() -> None:
    g = Graph(half_life=10**9)
    g.add(["a.py", "b.py"])
    g.add(["b.py", "c.py"])
    assert g.hints(["a.py"])[1].score == pytest.approx(HOP * 0.5 / (1 + math.log(3)))
    g.add(["b.py"])  # b changes alone: it links nothing new, but c is now a smaller share of b's changes
    assert g.hints(["a.py"])[1].score == pytest.approx(HOP * (1 / 3) / (1 + math.log(3)))
