"""The `checkboxes` check type: unticked `- [ ]` boxes in mission files are outstanding work."""

from __future__ import annotations

from checks_support import check, write

from dun.engine.model import Item, Status

CB = "type: checkboxes"

MISSION = """\
# Mission

- [x] Set up the project
- [ ] Write the parser
* [ ] Add tests
1. [X] Numbered and done

## Optional

- [ ] Dark mode

## Later
- [ ] Ship 1.0
"""


def test_open_boxes_fail_with_file_and_line_items(repo):
    write(repo, "MISSION.md", MISSION)
    result = check(repo, CB)
    assert result.status is Status.FAIL
    assert result.items == [
        Item("Write the parser", "MISSION.md", 4),
        Item("Add tests", "MISSION.md", 5),
        Item("Ship 1.0", "MISSION.md", 13),
    ]
    assert result.signal == "3 open: MISSION.md:4 Write the parser"
    assert result.detail == "2/5 boxes done, 1 optional open"
    assert result.next


def test_all_ticked_passes_with_a_tally(repo):
    write(repo, "MISSION.md", "# M\n- [x] one\n- [X] two\n\n## Optional\n- [ ] maybe\n")
    result = check(repo, CB)
    assert result.status is Status.PASS
    assert result.signal == "2/2 boxes done, 1 optional open"
    assert result.items == []


def test_optional_headings_and_their_subsections_do_not_block(repo):
    write(repo, "MISSION.md", """\
# Mission
- [x] core
## Future work
### Ideas
- [ ] time travel
## Nice to have (someday)
- [ ] confetti
## Optionality of the API
- [ ] this one blocks: only whole words count
""")
    result = check(repo, CB)
    assert result.status is Status.FAIL
    assert result.items == [Item("this one blocks: only whole words count", "MISSION.md", 9)]


def test_custom_optional_headings(repo):
    write(repo, "MISSION.md", "# M\n## Stretch goals\n- [ ] fly\n## Optional\n- [ ] now blocks\n")
    result = check(repo, CB + "\noptional_headings: [Stretch]")
    assert result.status is Status.FAIL
    assert result.items == [Item("now blocks", "MISSION.md", 5)]


def test_boxes_in_code_fences_are_ignored(repo):
    write(repo, "MISSION.md", """\
# M
- [x] real
```markdown
- [ ] example in a fence
```
~~~~
- [ ] example in a tilde fence
~~~~
    - [ ] indented list item still counts
""")
    result = check(repo, CB)
    assert result.status is Status.FAIL
    assert result.items == [Item("indented list item still counts", "MISSION.md", 9)]


def test_default_files_include_fix_plan(repo):
    write(repo, "fix_plan.md", "- [ ] fix the bug\n")
    result = check(repo, CB)
    assert result.status is Status.FAIL
    assert result.items == [Item("fix the bug", "fix_plan.md", 1)]


def test_globs_in_files_find_nested_plans(repo):
    write(repo, "docs/plans/a.md", "- [ ] plan a\n")
    write(repo, "docs/plans/deep/b.md", "- [x] plan b\n- [ ] plan b2\n")
    write(repo, "docs/other.md", "- [ ] not matched\n")
    result = check(repo, CB + "\nfiles: ['docs/plans/**/*.md']")
    assert result.status is Status.FAIL
    assert sorted(result.items, key=lambda i: i.file or "") == [
        Item("plan a", "docs/plans/a.md", 1),
        Item("plan b2", "docs/plans/deep/b.md", 2),
    ]


def test_literal_and_glob_naming_the_same_file_count_it_once(repo):
    write(repo, "MISSION.md", "- [ ] once\n")
    result = check(repo, CB + "\nfiles: [MISSION.md, '*.md']")
    assert result.items == [Item("once", "MISSION.md", 1)]


def test_glob_does_not_read_ignored_files(repo):
    write(repo, ".gitignore", "scratch/\n")
    write(repo, "scratch/todo.md", "- [ ] ignored\n")
    result = check(repo, CB + "\nfiles: ['**/*.md']")
    assert result.status is Status.PASS


def test_no_mission_files_skips(repo):
    result = check(repo, CB)
    assert result.status is Status.SKIP
    assert result.signal == "no mission files found (MISSION.md, fix_plan.md)"


def test_file_without_boxes_passes(repo):
    write(repo, "MISSION.md", "# Just prose\n")
    result = check(repo, CB)
    assert result.status is Status.PASS
    assert result.signal == "0/0 boxes done"


def test_non_utf8_file_is_an_error_naming_it_and_other_items_stay(repo):
    (repo / "MISSION.md").write_bytes(b"# Mission\n- [ ] caf\xe9\n")
    write(repo, "fix_plan.md", "- [ ] readable task\n")
    result = check(repo, CB)
    assert result.status is Status.ERROR
    assert result.signal.startswith("cannot read MISSION.md: not valid UTF-8")
    assert result.items == [Item("readable task", "fix_plan.md", 1)]


def test_binary_mission_file_is_an_error(repo):
    (repo / "MISSION.md").write_bytes(b"\x00\x01binary")
    result = check(repo, CB)
    assert result.status is Status.ERROR
    assert result.signal == "cannot read MISSION.md: binary"


def test_max_items_caps_and_counts(repo):
    write(repo, "MISSION.md", "".join(f"- [ ] task {n}\n" for n in range(6)))
    result = check(repo, CB + "\nmax_items: 2")
    assert [i.text for i in result.items] == ["task 0", "task 1", "... and 4 more boxes"]
    assert result.signal.startswith("6 open:")


def test_crlf_and_bare_boxes(repo):
    (repo / "MISSION.md").write_bytes(b"# M\r\n- [ ] windows line\r\n- [ ]\r\n")
    result = check(repo, CB)
    assert result.items == [Item("windows line", "MISSION.md", 2), Item("", "MISSION.md", 3)]


def test_works_outside_git(plain_dir):
    write(plain_dir, "MISSION.md", "- [ ] plain task\n")
    result = check(plain_dir, CB)
    assert result.status is Status.FAIL
    assert result.items == [Item("plain task", "MISSION.md", 1)]
