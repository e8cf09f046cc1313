"""The `gates` check type: gate YAML files list the evidence (files, globs, `path#Heading`) a phase needs."""

from __future__ import annotations

from checks_support import check, manifest, write

from dun.engine.model import Item, Status

GATES = "type: gates\nfiles: ['docs/gates/*.yml']"


def test_no_gate_files_skips(repo):
    result = check(repo, GATES)
    assert result.status is Status.SKIP
    assert result.signal == "no gate files match docs/gates/*.yml"


def test_all_required_evidence_present_passes(repo):
    write(repo, "docs/design.md", "# Design\n\n## Architecture\ntext\n")
    write(repo, "docs/gates/design.yml", """\
gate: design
description: The design is written down.
required:
  - README.md
  - docs/design.md#Architecture
  - docs/*.md
""")
    result = check(repo, GATES)
    assert result.status is Status.PASS
    assert result.signal == "1 gate(s) satisfied"
    assert result.items == []


def test_missing_required_evidence_fails_with_one_item_each(repo):
    write(repo, "docs/design.md", "# Design\n")
    write(repo, "docs/gates/build.yml", """\
gate: build
required:
  - docs/design.md
  - docs/api.md
  - docs/design.md#Risks
  - "tests/**/test_*.py"
""")
    result = check(repo, GATES + "\nnext: write the docs")
    assert result.status is Status.FAIL
    assert result.signal == "3 required evidence missing across 1 gate(s)"
    assert result.items == [
        Item("[build] required: missing file docs/api.md", "docs/gates/build.yml"),
        Item("[build] required: docs/design.md has no heading 'Risks'", "docs/gates/build.yml"),
        Item("[build] required: no file matches tests/**/test_*.py", "docs/gates/build.yml"),
    ]
    assert result.next  # some next action is suggested


def test_optional_evidence_missing_only_warns(repo):
    write(repo, "docs/gates/ship.yml", "required: [README.md]\noptional: [CHANGELOG.md, 'docs/adr/*.md']\n")
    result = check(repo, GATES)
    assert result.status is Status.WARN
    assert result.signal == "2 optional evidence missing across 1 gate(s)"
    assert result.items == [
        Item("[docs/gates/ship.yml] optional: missing file CHANGELOG.md", "docs/gates/ship.yml"),
        Item("[docs/gates/ship.yml] optional: no file matches docs/adr/*.md", "docs/gates/ship.yml"),
    ]


def test_required_failure_outranks_optional_and_lists_both(repo):
    write(repo, "docs/gates/g.yml", "gate: g\nrequired: [SPEC.md]\noptional: [NOTES.md]\n")
    result = check(repo, GATES)
    assert result.status is Status.FAIL
    assert [i.text for i in result.items] == [
        "[g] required: missing file SPEC.md",
        "[g] optional: missing file NOTES.md",
    ]


def test_heading_match_ignores_case_and_spacing_but_not_fenced_code(repo):
    write(repo, "PLAN.md", "# Plan\n\n##   test   STRATEGY ##\n\n```\n# Rollout\n```\n")
    write(repo, "docs/gates/a.yml", "gate: a\nrequired: ['PLAN.md#Test Strategy']\n")
    write(repo, "docs/gates/b.yml", "gate: b\nrequired: ['PLAN.md#Rollout']\n")
    result = check(repo, GATES)
    assert result.status is Status.FAIL
    assert result.signal == "1 required evidence missing across 2 gate(s)"
    assert result.items == [Item("[b] required: PLAN.md has no heading 'Rollout'", "docs/gates/b.yml")]


def test_missing_file_for_heading_evidence_says_so(repo):
    write(repo, "docs/gates/g.yml", "gate: g\nrequired: ['docs/risk.md#Risks']\n")
    result = check(repo, GATES)
    assert result.status is Status.FAIL
    assert result.items == [
        Item("[g] required: missing file docs/risk.md (needed for heading 'Risks')", "docs/gates/g.yml"),
    ]


def test_heading_on_a_directory_is_missing_evidence(repo):
    write(repo, "docs/x.md", "# X\n")
    write(repo, "docs/gates/g.yml", "gate: g\nrequired: ['docs#X']\n")
    result = check(repo, GATES)
    assert result.status is Status.FAIL
    assert "docs is not a file" in result.items[0].text


def test_glob_evidence_counts_untracked_but_not_ignored_files(repo):
    write(repo, ".gitignore", "out/\n")
    write(repo, "out/report.html", "<p>ignored</p>\n")
    write(repo, "docs/gates/g.yml", "gate: g\nrequired: ['out/*.html', 'notes/*.txt']\n")
    write(repo, "notes/n.txt", "untracked\n")
    result = check(repo, GATES)
    assert result.status is Status.FAIL
    assert [i.text for i in result.items] == ["[g] required: no file matches out/*.html"]


def test_several_gate_files_from_a_recursive_glob(repo):
    write(repo, "docs/helix/01-frame/gate.yml", "gate: frame\nrequired: [README.md]\n")
    write(repo, "docs/helix/02-design/gate.yaml", "gate: design\nrequired: [DESIGN.md]\n")
    result = check(repo, "type: gates\nfiles: ['docs/helix/**/gate.y*ml']")
    assert result.status is Status.FAIL
    assert result.signal == "1 required evidence missing across 2 gate(s)"
    assert result.items == [Item("[design] required: missing file DESIGN.md", "docs/helix/02-design/gate.yaml")]


def test_malformed_gate_yaml_is_an_error_naming_the_file(repo):
    write(repo, "docs/gates/ok.yml", "gate: ok\nrequired: [MISSING.md]\n")
    write(repo, "docs/gates/broken.yml", "gate: broken\nrequired: [unclosed\n")
    result = check(repo, GATES)
    assert result.status is Status.ERROR
    assert result.signal.startswith("invalid gate file:")
    assert "docs/gates/broken.yml" in result.signal
    assert "YAML syntax error" in result.signal
    # the readable gate's findings are still reported
    assert [i.text for i in result.items] == ["[ok] required: missing file MISSING.md"]


def test_gate_file_that_is_not_a_mapping_is_an_error(repo):
    write(repo, "docs/gates/list.yml", "- README.md\n")
    result = check(repo, GATES)
    assert result.status is Status.ERROR
    assert "docs/gates/list.yml: a gate file must be a mapping" in result.signal


def test_unknown_key_in_gate_file_is_an_error_with_position(repo):
    write(repo, "docs/gates/typo.yml", "gate: t\nrequird: [README.md]\n")
    result = check(repo, GATES)
    assert result.status is Status.ERROR
    assert "docs/gates/typo.yml:2:1: requird: unknown key 'requird'" in result.signal
    assert "did you mean 'required'" in result.signal


def test_empty_gate_file_is_an_error(repo):
    write(repo, "docs/gates/empty.yml", "")
    result = check(repo, GATES)
    assert result.status is Status.ERROR
    assert "docs/gates/empty.yml" in result.signal


def test_non_utf8_gate_file_is_an_error_naming_it(repo):
    (repo / "docs" / "gates").mkdir(parents=True)
    (repo / "docs" / "gates" / "latin1.yml").write_bytes(b"gate: caf\xe9\nrequired: [README.md]\n")
    result = check(repo, GATES)
    assert result.status is Status.ERROR
    assert "latin1.yml" in result.signal


def test_gates_files_field_is_required():
    parsed, errors = manifest("id: test\nchecks:\n  - id: c\n    type: gates\n")
    assert parsed is None
    assert errors == ["test.yaml:3:5: checks[0].files: required key is missing"]


def test_glob_evidence_with_heading_needs_the_heading(repo):
    write(repo, "docs/a.md", "# A\n")
    write(repo, "docs/b.md", "# B\n")
    write(repo, "docs/gates/g.yml", "gate: g\nrequired: ['docs/*.md#Risks']\n")
    result = check(repo, GATES)
    assert result.status is Status.FAIL
    assert len(result.items) == 1
    assert "Risks" in result.items[0].text
