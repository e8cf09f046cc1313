from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dun.checks.readers.markdown import Box, Heading, has_heading, parse_boxes, parse_headings


def texts(doc: str) -> list[str]:
    return [box.text for box in parse_boxes(doc)]


# --- markers and states -------------------------------------------------------------------------


@pytest.mark.parametrize("marker", ["-", "*", "+", "1.", "1)", "42.", "7)"])
def test_each_marker_is_a_box(marker: str) -> None:
    boxes = parse_boxes(f"{marker} [ ] do the thing\n", file="TODO.md")
    assert boxes == [
        Box(
            file="TODO.md",
            line=1,
            text="do the thing",
            checked=False,
            optional=False,
            heading=None,
            indent=0,
            verify=None,
        )
    ]


@pytest.mark.parametrize(("mark", "checked"), [(" ", False), ("x", True), ("X", True)])
def test_checked_states(mark: str, checked: bool) -> None:
    assert [b.checked for b in parse_boxes(f"- [{mark}] task")] == [checked]


@pytest.mark.parametrize(
    "line",
    [
        "-[ ] no space after marker",
        "- [ ]no space after box",
        "- [y] unknown mark",
        "- [  ] two spaces",
        "[ ] no marker",
        "1 [ ] number without dot",
        "a. [ ] letter marker",
        "1234567890. [ ] too many digits",
        "- task without a box",
        "text - [ ] mid-line",
    ],
)
def test_non_boxes(line: str) -> None:
    assert parse_boxes(line) == []


def test_empty_text_and_trailing_whitespace() -> None:
    assert texts("- [ ]\n- [x]   \n-\t[ ]\ttabbed  \n") == ["", "", "tabbed"]


def test_nested_boxes_and_indent() -> None:
    doc = "- [ ] parent\n  - [x] child\n    1. [ ] grandchild\n\t- [ ] tabbed\n"
    boxes = parse_boxes(doc)
    assert [(b.text, b.indent, b.line, b.checked) for b in boxes] == [
        ("parent", 0, 1, False),
        ("child", 2, 2, True),
        ("grandchild", 4, 3, False),
        ("tabbed", 4, 4, False),
    ]


def test_indented_code_is_not_special() -> None:
    assert texts("Para\n\n    - [ ] deep\n") == ["deep"]


# --- fences -------------------------------------------------------------------------------------


@pytest.mark.parametrize("fence", ["```", "~~~", "````", "~~~~~"])
def test_box_inside_fence_ignored(fence: str) -> None:
    doc = f"- [ ] before\n{fence}python\n- [ ] inside\n# not a heading\n{fence}\n- [ ] after\n"
    assert texts(doc) == ["before", "after"]
    assert parse_headings(doc) == []


def test_unclosed_fence_runs_to_end() -> None:
    assert texts("- [ ] a\n```\n- [ ] b\n- [ ] c\n") == ["a"]


def test_longer_closing_fence_closes_and_shorter_does_not() -> None:
    assert texts("````\n- [ ] a\n```\n- [ ] b\n`````\n- [ ] c\n") == ["c"]


def test_other_fence_char_does_not_close() -> None:
    assert texts("~~~\n```\n- [ ] a\n~~~\n- [ ] b\n") == ["b"]


def test_closing_fence_with_info_string_does_not_close() -> None:
    assert texts("```\n```python\n- [ ] a\n```\n- [ ] b\n") == ["b"]


def test_fence_indentation_limit() -> None:
    assert texts("   ```\n- [ ] a\n   ```\n- [ ] b\n") == ["b"]
    # Four spaces is not a fence opener, so nothing is hidden.
    assert texts("    ```\n- [ ] a\n") == ["a"]


def test_inline_backticks_are_not_a_fence() -> None:
    assert texts("```a` b```\n- [ ] a\n") == ["a"]


# --- headings -----------------------------------------------------------------------------------


def test_parse_headings() -> None:
    doc = (
        "# One #\n## Two ###   \n   ### Three\n#### C#\n#####\n###### #\n"
        "####### seven\n#nospace\n    # code\n"
    )
    assert parse_headings(doc) == [
        Heading(1, "One", 1),
        Heading(2, "Two", 2),
        Heading(3, "Three", 3),
        Heading(4, "C#", 4),
        Heading(5, "", 5),
        Heading(6, "", 6),
    ]


def test_has_heading() -> None:
    doc = "intro\n##   Acceptance   Criteria  ##\n```\n# Hidden\n```\n"
    assert has_heading(doc, "acceptance criteria")
    assert has_heading(doc, " ACCEPTANCE\tcriteria ")
    assert not has_heading(doc, "Acceptance")
    assert not has_heading(doc, "Hidden")
    assert not has_heading("Acceptance Criteria\n", "Acceptance Criteria")


def test_box_heading_is_nearest_enclosing() -> None:
    doc = "- [ ] top\n# A\n- [ ] a\n## B\n- [ ] b\n# C\n- [ ] c\n"
    assert [b.heading for b in parse_boxes(doc)] == [None, "A", "B", "C"]


# --- optional scope -----------------------------------------------------------------------------


def optional_map(doc: str, names: Sequence[str] = ("Optional", "Future", "Nice to Have")) -> dict[str, bool]:
    return {b.text: b.optional for b in parse_boxes(doc, optional_headings=names)}


def test_optional_scope() -> None:
    doc = (
        "# Plan\n- [ ] core\n"
        "## Optional\n- [ ] opt\n### Details\n- [ ] deeper\n"
        "## Required\n- [ ] req\n"
        "## Future work\n- [ ] fut\n"
        "# Later top\n- [ ] top\n"
    )
    assert optional_map(doc) == {
        "core": False,
        "opt": True,
        "deeper": True,
        "req": False,
        "fut": True,
        "top": False,
    }


@pytest.mark.parametrize(
    ("heading", "optional"),
    [
        ("Optional", True),
        ("optional", True),
        ("OPTIONAL: extras", True),
        ("Optional tasks", True),
        ("Nice to Have (later)", True),
        ("nice  to have", True),
        ("Future", True),
        ("Optionality of X", False),
        ("Futures trading", False),
        ("Nice", False),
        ("Not optional", False),
    ],
)
def test_optional_heading_matching(heading: str, optional: bool) -> None:
    assert [b.optional for b in parse_boxes(f"## {heading}\n- [ ] t\n")] == [optional]


def test_custom_optional_headings() -> None:
    doc = "## Stretch goals\n- [ ] s\n## Optional\n- [ ] o\n"
    assert optional_map(doc, ["Stretch"]) == {"s": True, "o": False}
    assert optional_map(doc, []) == {"s": False, "o": False}


# --- verify lines -------------------------------------------------------------------------------


def test_verify_lines() -> None:
    doc = (
        "- [ ] plain\n  verify: make test\n"
        "- [ ] listed\n  - verify:   pytest -q  \n"
        "- [ ] ordered\n    1. verify: ./check.sh\n"
        "- [ ] not indented\nverify: nope\n"
        "- [ ] gap\n\n  verify: nope\n"
        "- [ ] empty\n  verify:\n"
        "- [ ] uppercase\n  Verify: nope\n"
        "  - [ ] nested\n  verify: same indent, not under\n"
        "- [ ] last"
    )
    assert {b.text: b.verify for b in parse_boxes(doc)} == {
        "plain": "make test",
        "listed": "pytest -q",
        "ordered": "./check.sh",
        "not indented": None,
        "gap": None,
        "empty": None,
        "uppercase": None,
        "nested": None,
        "last": None,
    }


# --- line endings, unicode, size ----------------------------------------------------------------


def test_crlf() -> None:
    doc = "# Optional #\r\n- [x] one\r\n  verify: run it\r\n```\r\n- [ ] hidden\r\n```\r\n- [ ] two\r\n"
    boxes = parse_boxes(doc)
    assert [(b.line, b.text, b.checked, b.optional, b.verify) for b in boxes] == [
        (2, "one", True, True, "run it"),
        (7, "two", False, True, None),
    ]
    assert parse_headings(doc) == [Heading(1, "Optional", 1)]


def test_unicode_and_odd_separators_keep_line_numbers() -> None:
    doc = "# Größe 🚀\n- [ ] naïve \u2028 task\n\x0c\n- [x] 完成\n"
    assert [(b.line, b.text, b.heading) for b in parse_boxes(doc)] == [
        (2, "naïve \u2028 task", "Größe 🚀"),
        (4, "完成", "Größe 🚀"),
    ]


def test_many_boxes() -> None:
    doc = "".join(f"## S{i}\n- [ ] task {i}\n  - [x] sub {i}\n" for i in range(5000))
    boxes = parse_boxes(doc, file="big.md")
    assert len(boxes) == 10000
    assert boxes[-1] == Box("big.md", 15000, "sub 4999", True, False, "S4999", 2, None)


def test_pathological_lines_parse() -> None:
    # A quadratic regex here would hang the suite rather than fail it; CI's own limit catches that.
    n = 200_000
    doc = "\n".join(
        [
            "# a" + " " * n + "b",
            "-" + " " * n + "x",
            " " * n + "- [ ]" + " " * n + "t",
            "`" * n + " info",
            "#" * n,
        ]
    )
    boxes = parse_boxes(doc)
    assert [(b.line, b.text) for b in boxes] == [(3, "t")]


# --- properties ---------------------------------------------------------------------------------


@given(st.text())
def test_never_raises(doc: str) -> None:
    boxes = parse_boxes(doc)
    headings = parse_headings(doc)
    has_heading(doc, "x")
    line_count = doc.count("\n") + 1
    assert all(1 <= b.line <= line_count for b in boxes)
    assert all(1 <= h.line <= line_count and 1 <= h.level <= 6 for h in headings)


@dataclass(frozen=True)
class Expected:
    line: int
    text: str
    checked: bool
    verify: str | None
    heading: str | None
    optional: bool


@dataclass(frozen=True)
class Prose:
    text: str


@dataclass(frozen=True)
class Head:
    level: int
    title: str


@dataclass(frozen=True)
class BoxSpec:
    indent: int
    marker: str
    mark: str
    text: str
    cmd: str | None


words = st.text(alphabet="abcdefghij klmnop", min_size=1, max_size=20)
box_text = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\n\r[]"), max_size=30
)
part = st.one_of(
    # Prose starts with a letter so it can never be a box, heading, fence or verify line.
    st.builds(Prose, words.map(lambda s: "P" + s)),
    st.builds(
        Head, st.integers(1, 6), words.map(lambda s: "H" + s) | st.sampled_from(["Optional", "Future"])
    ),
    st.builds(
        BoxSpec,
        st.integers(0, 8),
        st.sampled_from(["-", "*", "+", "1.", "23)"]),
        st.sampled_from(" xX"),
        box_text,
        st.none() | words.map(lambda s: "cmd " + s),
    ),
)
documents = st.lists(part, max_size=40)


def build(parts: list[Prose | Head | BoxSpec]) -> tuple[list[str], list[Expected]]:
    """Render parts to lines and compute the boxes a correct parser must report."""
    lines: list[str] = []
    expected: list[Expected] = []
    open_headings: list[Head] = []
    for p in parts:
        if isinstance(p, Prose):
            lines.append(p.text)
        elif isinstance(p, Head):
            lines.append("#" * p.level + " " + p.title)
            open_headings = [h for h in open_headings if h.level < p.level] + [p]
        else:
            lines.append(" " * p.indent + f"{p.marker} [{p.mark}] {p.text}")
            line = len(lines)
            if p.cmd is not None:
                lines.append(" " * (p.indent + 2) + "verify: " + p.cmd)
            expected.append(
                Expected(
                    line=line,
                    text=p.text.strip(),
                    checked=p.mark != " ",
                    verify=None if p.cmd is None else p.cmd.strip(),
                    heading=open_headings[-1].title.strip() if open_headings else None,
                    optional=any(h.title in ("Optional", "Future") for h in open_headings),
                )
            )
    return lines, expected


def found(doc: str) -> list[Expected]:
    return [Expected(b.line, b.text, b.checked, b.verify, b.heading, b.optional) for b in parse_boxes(doc)]


@settings(max_examples=200)
@given(documents, st.sampled_from(["\n", "\r\n"]))
def test_generated_documents_round_trip(parts: list[Prose | Head | BoxSpec], newline: str) -> None:
    lines, expected = build(parts)
    assert found(newline.join(lines)) == expected


@given(documents, st.sampled_from(["```", "~~~~"]), st.booleans())
def test_fenced_document_has_no_boxes(parts: list[Prose | Head | BoxSpec], fence: str, closed: bool) -> None:
    lines, expected = build(parts)
    doc = "\n".join([fence, *lines, *([fence] if closed else [])])
    assert parse_boxes(doc) == []
    assert parse_headings(doc) == []
    # Sanity: the same content unfenced does have the boxes, so the fence is what hid them.
    assert found("\n".join(lines)) == expected
