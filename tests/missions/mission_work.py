"""What a scripted agent writes to meet each built-in mission template's success criteria (shared by the template
tests and the paper watch's deep-dive test)."""

from __future__ import annotations


def sources(n: int) -> str:
    return "".join(f'[{i}]: https://example.org/paper/{i} "Work {i}, 2025"\n' for i in range(1, n + 1))


def review(*papers: tuple[str, str]) -> str:
    """The running review of deep dives: its synthesis, then one section per (title, slug)."""
    return "# Deep dives\n\n## Synthesis\n\nWhat they mean together.\n\n" + "".join(
        f"## {title} [{slug}]\n\nVerdict: try - cheap\n\n" for title, slug in papers)


def cites(n: int) -> str:
    return "".join(f"- Finding {i} rests on [{i % 8 + 1}].\n" for i in range(n))


# template -> files an agent writes that meet every success criterion of its checks
WORK: dict[str, dict[str, str]] = {
    "implementation": {"docs/design.md": "# Design\n\nOne part.\n", "CHANGELOG.md": "# Changes\n\n- Added greet.\n",
                       "README.md": "# demo\n\nRun greet.\n"},
    "research": {"research/REPORT.md": "# Report\n\n## Question\n\n## Background\n\n" + cites(10)
                 + "\n## Findings\n\n## Evidence\n\n## Open questions\n\n## Sources\n\n" + sources(8)},
    "survey": {"survey/SURVEY.md": "# Survey\n\n### Group A\n\n### Group B\n\n### Group C\n\n"
               + "| ref | method |\n|---|---|\n" + "".join(f"| [{i}] | m{i} |\n" for i in range(1, 11))
               + "\n## Gaps\n\n## Sources\n\n" + sources(20)},
    "deepdive": {"deepdive/paper.md": "# Notes\n\n" + "".join(f"## {s}\n\ntext\n\n" for s in (
        "Summary", "Contributions", "Method", "Results", "Limitations", "Reproduction", "Related work"))
                 + "".join(f"- Claim: c{i} - evidence: table {i}\n" for i in range(5)) + "\n" + sources(5)
                 + "\nVerdict: try - small and cheap to reproduce\n",
                 "deepdive/REVIEW.md": review(("A paper", "paper"))},
    "tests": {"docs/test-plan.md": "".join(f"- [core] behaviour {i} - test: tests/test_{i % 5}.py::test_{i}\n"
                                           for i in range(10)),
              **{f"tests/test_{i}.py": f"def test_{i}():\n    assert True\n" for i in range(5)}},
    "docs": {"README.md": "# demo\n\n" + "".join(f"## {s}\n\ntext\n\n" for s in (
        "Install", "Quick start", "Usage", "Configuration", "Troubleshooting")),
             "docs/index.md": "# Docs\n\n- [a](a.md)\n- [b](b.md)\n", "docs/a.md": "# A\n", "docs/b.md": "# B\n"},
}
