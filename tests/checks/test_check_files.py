"""The `files` check type: path-exists, path-missing, glob-min/max-count and pattern-count on real repos."""

from __future__ import annotations

import pytest
from checks_support import check, git, manifest, write

from dun.engine.model import Item, Status

# --- path-exists / path-missing --------------------------------------------------------------------------------


def test_path_exists_passes_when_every_path_exists(repo):
    write(repo, "docs/guide.md", "# guide\n")
    result = check(repo, "type: files\nrule: path-exists\npaths: [README.md, docs/guide.md, docs]")
    assert result.status is Status.PASS
    assert result.signal == "all 3 paths exist"


def test_path_exists_fails_listing_each_missing_path(repo):
    result = check(repo, "type: files\nrule: path-exists\npaths: [README.md, LICENSE, CHANGELOG.md]")
    assert result.status is Status.FAIL
    assert result.signal == "2 path(s) missing: LICENSE, CHANGELOG.md"
    assert result.items == [Item("missing", "LICENSE"), Item("missing", "CHANGELOG.md")]


def test_path_exists_accepts_a_single_path(repo):
    assert check(repo, "type: files\nrule: path-exists\npaths: README.md").status is Status.PASS


def test_path_missing_passes_when_all_absent(repo):
    result = check(repo, "type: files\nrule: path-missing\npaths: [.env, secrets.txt]")
    assert result.status is Status.PASS
    assert result.signal == "all 2 paths absent"


def test_path_missing_fails_for_present_paths(repo):
    write(repo, ".env", "TOKEN=x\n")
    result = check(repo, "type: files\nrule: path-missing\npaths: [.env, secrets.txt]")
    assert result.status is Status.FAIL
    assert result.items == [Item("present but should not be", ".env")]
    assert ".env" in result.signal


def test_path_items_are_capped_by_max_items(repo):
    result = check(repo, "type: files\nrule: path-exists\nmax_items: 2\npaths: [a, b, c, d, e]")
    assert result.status is Status.FAIL
    assert [(i.text, i.file) for i in result.items] == [("missing", "a"), ("missing", "b"), ("... and 3 more", None)]


# --- glob counts ------------------------------------------------------------------------------------------------


@pytest.fixture
def tree(repo):
    """A repo with committed, untracked, ignored and deleted files."""
    write(repo, ".gitignore", "build/\n*.log\n")
    write(repo, "src/app.py", "x = 1\n")
    write(repo, "src/pkg/deep/mod.py", "y = 2\n")
    write(repo, "tests/test_app.py", "def test(): pass\n")
    write(repo, "gone.py", "z = 3\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tree")
    (repo / "gone.py").unlink()  # tracked, deleted in the working tree
    write(repo, "src/new_untracked.py", "n = 4\n")  # untracked, not ignored
    write(repo, "build/generated.py", "g = 5\n")  # ignored directory
    write(repo, "src/debug.log", "log\n")  # ignored by pattern
    return repo


def test_glob_min_count_passes(tree):
    result = check(tree, "type: files\nrule: glob-min-count\nglob: '**/*.py'\nmin: 4")
    assert result.status is Status.PASS
    assert result.signal == "4 files match **/*.py"


def test_glob_counts_tracked_and_untracked_but_not_ignored_or_deleted(tree):
    # app.py, mod.py, test_app.py, new_untracked.py: not build/generated.py (ignored) nor gone.py (deleted)
    result = check(tree, "type: files\nrule: glob-max-count\nglob: '**/*.py'\nmax: 3")
    assert result.status is Status.FAIL
    assert result.signal == "4 files match **/*.py, allowed at most 3"
    assert sorted(i.file for i in result.items) == [
        "src/app.py", "src/new_untracked.py", "src/pkg/deep/mod.py", "tests/test_app.py",
    ]


def test_glob_min_count_fails_below_minimum(tree):
    result = check(tree, "type: files\nrule: glob-min-count\nglob: 'tests/**/test_*.py'\nmin: 2")
    assert result.status is Status.FAIL
    assert result.signal == "1 files match tests/**/test_*.py, need at least 2"


def test_ignored_and_deleted_files_never_match(tree):
    for glob in ("build/**", "*.log", "gone.py"):
        result = check(tree, f"type: files\nrule: glob-max-count\nglob: '{glob}'\nmax: 0")
        assert result.status is Status.PASS, glob
        assert result.signal.startswith("0 files match")


def test_untracked_file_counts(tree):
    result = check(tree, "type: files\nrule: glob-max-count\nglob: 'src/new_*.py'\nmax: 0")
    assert result.status is Status.FAIL
    assert [i.file for i in result.items] == ["src/new_untracked.py"]


def test_double_star_matches_at_any_depth_and_bang_excludes(tree):
    result = check(tree, """\
        type: files
        rule: glob-max-count
        glob: ['src/**/*.py', '!src/pkg/**']
        max: 0
        """)
    assert result.status is Status.FAIL
    assert sorted(i.file for i in result.items) == ["src/app.py", "src/new_untracked.py"]


def test_glob_without_slash_matches_at_any_depth(tree):
    result = check(tree, "type: files\nrule: glob-max-count\nglob: mod.py\nmax: 0")
    assert [i.file for i in result.items] == ["src/pkg/deep/mod.py"]


def test_glob_works_outside_git(plain_dir):
    write(plain_dir, ".gitignore", "out/\n")
    write(plain_dir, "a/b/c.md", "c\n")
    write(plain_dir, "out/d.md", "d\n")
    result = check(plain_dir, "type: files\nrule: glob-max-count\nglob: '**/*.md'\nmax: 0")
    assert result.status is Status.FAIL
    assert [i.file for i in result.items] == ["a/b/c.md"]


def test_file_names_with_spaces_and_unicode_match(repo):
    write(repo, "notes/naïve café.md", "x\n")
    write(repo, "notes/two words.md", "y\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "names")
    result = check(repo, "type: files\nrule: glob-max-count\nglob: 'notes/*.md'\nmax: 0")
    assert sorted(i.file for i in result.items) == ["notes/naïve café.md", "notes/two words.md"]


def test_glob_max_count_items_are_capped(repo):
    for n in range(5):
        write(repo, f"tmp/f{n}.txt", "x\n")
    result = check(repo, "type: files\nrule: glob-max-count\nglob: 'tmp/*'\nmax: 1\nmax_items: 2")
    assert result.status is Status.FAIL
    assert [i.text for i in result.items][-1] == "... and 3 more"
    assert len(result.items) == 3


# --- pattern-count ----------------------------------------------------------------------------------------------


def test_pattern_count_within_max_passes(repo):
    write(repo, "src/a.py", "x = 1  # TODO later\ny = 2\n")
    result = check(repo, "type: files\nrule: pattern-count\nglob: '**/*.py'\npattern: TODO\nmax: 1")
    assert result.status is Status.PASS
    assert result.signal == "1 line(s) match /TODO/ in 1 files"
    assert result.items == []


def test_pattern_count_over_max_fails_with_file_line_items(repo):
    write(repo, "src/a.py", "ok\n  # TODO: first  \nok\n")
    write(repo, "src/sub/b.py", "# TODO second\n")
    write(repo, "docs/c.md", "TODO not a python file\n")
    result = check(repo, "type: files\nrule: pattern-count\nglob: '**/*.py'\npattern: 'TODO'\nmax: 0")
    assert result.status is Status.FAIL
    assert result.signal == "2 line(s) match /TODO/ in 2 files, allowed at most 0"
    assert sorted(result.items, key=lambda i: i.file or "") == [
        Item("# TODO: first", "src/a.py", 2),
        Item("# TODO second", "src/sub/b.py", 1),
    ]


def test_pattern_count_below_min_fails(repo):
    write(repo, "CHANGELOG.md", "# Changelog\n## 1.0\n")
    result = check(repo, "type: files\nrule: pattern-count\nglob: CHANGELOG.md\npattern: '^## '\nmin: 2")
    assert result.status is Status.FAIL
    assert result.signal == "1 line(s) match /^## / in 1 files, need at least 2"


def test_pattern_count_skips_binary_files_and_says_so(repo):
    write(repo, "data/notes.txt", "SECRET one\n")
    (repo / "data" / "blob.txt").write_bytes(b"SECRET\x00\x01\x02binary\n")
    result = check(repo, "type: files\nrule: pattern-count\nglob: 'data/*.txt'\npattern: SECRET\nmax: 0")
    assert result.status is Status.FAIL
    assert result.items == [Item("SECRET one", "data/notes.txt", 1)]
    assert "data/blob.txt (binary)" in result.detail
    assert "skipped 1" in result.detail


def test_pattern_count_reads_non_utf8_text(repo):
    (repo / "legacy.txt").write_bytes(b"caf\xe9 TODO\n")
    result = check(repo, "type: files\nrule: pattern-count\nglob: legacy.txt\npattern: TODO\nmax: 0")
    assert result.status is Status.FAIL
    assert [(i.file, i.line) for i in result.items] == [("legacy.txt", 1)]


def test_pattern_count_ignores_ignored_files(repo):
    write(repo, ".gitignore", "vendor/\n")
    write(repo, "vendor/lib.py", "TODO\n")
    result = check(repo, "type: files\nrule: pattern-count\nglob: '**/*.py'\npattern: TODO\nmax: 0")
    assert result.status is Status.PASS
    assert result.signal == "0 line(s) match /TODO/ in 0 files"


# --- validation -------------------------------------------------------------------------------------------------


def _errors(body: str) -> list[str]:
    lines = "".join(f"    {line}\n" for line in body.strip().splitlines())
    parsed, errors = manifest("id: test\nchecks:\n  - id: c\n    type: files\n" + lines)
    assert parsed is None
    return errors


def test_pattern_count_without_pattern_is_a_validation_error():
    errors = _errors("rule: pattern-count\nglob: '*.py'\nmax: 0")
    assert len(errors) == 1
    assert errors[0].startswith("test.yaml:3:")
    assert errors[0].endswith("checks[0].pattern: rule 'pattern-count' needs 'pattern'")


def test_pattern_count_without_bounds_is_a_validation_error():
    errors = _errors("rule: pattern-count\nglob: '*.py'\npattern: x")
    assert any(e.endswith("checks[0].max: rule 'pattern-count' needs 'min' or 'max'") for e in errors)


def test_glob_rules_need_their_fields():
    assert any(e.endswith("checks[0].min: rule 'glob-min-count' needs 'min'")
               for e in _errors("rule: glob-min-count\nglob: '*.py'"))
    assert any(e.endswith("checks[0].glob: rule 'glob-max-count' needs 'glob'")
               for e in _errors("rule: glob-max-count\nmax: 1"))
    assert any(e.endswith("checks[0].paths: rule 'path-exists' needs 'paths'")
               for e in _errors("rule: path-exists"))


def test_unknown_rule_suggests_the_right_one():
    errors = _errors("rule: path-exist\npaths: [a]")
    assert len(errors) == 1
    assert errors[0].startswith("test.yaml:5:11: checks[0].rule: must be one of")
    assert "(did you mean 'path-exists'?)" in errors[0]


def test_invalid_pattern_regex_is_reported_at_its_key():
    errors = _errors("rule: pattern-count\nglob: '*.py'\npattern: '[oops'\nmax: 0")
    assert len(errors) == 1
    assert errors[0].startswith("test.yaml:7:14: checks[0].pattern: invalid regex '[oops'")


def test_negative_max_is_rejected():
    errors = _errors("rule: glob-max-count\nglob: '*.py'\nmax: -1")
    assert any("checks[0].max: must be at least 0, got -1" in e for e in errors)


def test_pattern_count_handles_crlf_files(repo):
    (repo / "win.txt").write_bytes(b"one\r\ntwo TODO\r\n")
    result = check(repo, "type: files\nrule: pattern-count\nglob: win.txt\npattern: 'TODO$'\nmax: 0")
    assert result.items == [Item("two TODO", "win.txt", 2)]


def test_pattern_count_line_numbers_match_editors_after_a_form_feed(repo):
    # A form feed (^L page break, common in older Python/C sources) is not a line break for git, grep or editors.
    (repo / "paged.py").write_bytes(b"import os\n\x0c\ndef f():\n    pass  # TODO\n")
    result = check(repo, "type: files\nrule: pattern-count\nglob: paged.py\npattern: TODO\nmax: 0")
    assert result.status is Status.FAIL
    assert [(i.file, i.line) for i in result.items] == [("paged.py", 4)]


def test_invalid_glob_is_a_validation_error():
    parsed, errors = manifest("""\
        id: test
        checks:
          - id: c
            type: files
            rule: glob-min-count
            glob: ['docs\\']
            min: 1
        """)
    assert parsed is None
    assert any("checks[0].glob" in e for e in errors)


def test_suffix_glob_matches_files_inside_a_directory_of_that_name(repo):
    # gitignore semantics: `*.egg-info` names the directory, so the files in it match too
    write(repo, "dun.egg-info/PKG-INFO", "Name: dun\n")
    write(repo, "src/app.py", "x\n")
    result = check(repo, "type: files\nrule: glob-max-count\nglob: '*.egg-info'\nmax: 0")
    assert result.status is Status.FAIL
    assert [i.file for i in result.items] == ["dun.egg-info/PKG-INFO"]


# --- unique-ids and cross-reference -------------------------------------------------------------------------------


def test_unique_ids_lists_every_later_definition_of_an_id(repo):
    write(repo, "docs/reqs.md", "# Requirements\n- REQ-1 login\n- REQ-2 logout\n- REQ-10 audit\n")
    write(repo, "docs/more.md", "Also: REQ-2 again, and REQ-3.\n")
    result = check(repo, r"""
        type: files
        rule: unique-ids
        glob: ["docs/*.md"]
        pattern: '\bREQ-\d+\b'
        """)
    assert result.status is Status.FAIL
    # files are read in path order: docs/more.md holds the first REQ-2
    assert result.items == [Item("duplicate id REQ-2 (first at docs/more.md:1)", "docs/reqs.md", 3)]
    assert result.signal.startswith("1 duplicate id(s) among 5: duplicate id REQ-2")
    write(repo, "docs/more.md", "Also REQ-3.\n")
    passed = check(repo, "type: files\nrule: unique-ids\nglob: ['docs/*.md']\npattern: '^- (?P<id>REQ-\\d+)'")
    assert passed.status is Status.PASS and passed.signal == "3 ids, all unique"


def test_cross_reference_needs_every_id_mentioned_in_the_references(repo):
    write(repo, "docs/reqs.md", "- REQ-1 login\n- REQ-2 logout\n- REQ-10 audit\n")
    write(repo, "tests/test_auth.py", "def test_login():  # REQ-1\n    pass\n# covers REQ-10\n")
    result = check(repo, r"""
        type: files
        rule: cross-reference
        glob: ["docs/reqs.md"]
        pattern: 'REQ-\d+'
        references: ["tests/**/*.py"]
        """)
    assert result.status is Status.FAIL
    assert result.items == [Item("REQ-2 is not referenced in tests/**/*.py", "docs/reqs.md", 2)]
    assert result.signal == "1 of 3 id(s) not referenced in tests/**/*.py: REQ-2"
    write(repo, "tests/test_out.py", "# REQ-2\n")
    assert check(repo, "type: files\nrule: cross-reference\nglob: [docs/reqs.md]\npattern: 'REQ-\\d+'\n"
                       "references: ['tests/**/*.py']").status is Status.PASS


def test_cross_reference_does_not_count_the_definition_itself(repo):
    write(repo, "SPEC.md", "## REQ-1\nThe login.\n## REQ-2\nSee REQ-1.\n")
    result = check(repo, "type: files\nrule: cross-reference\nglob: [SPEC.md]\npattern: '^## (REQ-\\d+)'\n"
                         "references: [SPEC.md]")
    assert result.items == [Item("REQ-2 is not referenced in SPEC.md", "SPEC.md", 3)]


def test_id_rules_need_their_fields():
    parsed, errors = manifest("""\
        id: test
        checks:
          - {id: a, type: files, rule: cross-reference, glob: [x.md], pattern: 'X-\\d+'}
          - {id: b, type: files, rule: unique-ids, glob: [x.md]}
        """)
    assert parsed is None
    assert any("checks[0].references: rule 'cross-reference' needs 'references'" in e for e in errors), errors
    assert any("checks[1].pattern: rule 'unique-ids' needs 'pattern'" in e for e in errors), errors
