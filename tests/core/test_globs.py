"""dun's shortcuts in glob matching must never change what pathspec (git's rules) would match."""

from __future__ import annotations

import pathspec
from hypothesis import given, settings
from hypothesis import strategies as st

from dun.core.globs import glob_errors, match_files

SEGMENTS = ["src", "docs", "a.py", "b.md", "x.egg-info", "tests", "deep", "c.txt", "__init__.py", "gate.yml"]
PATTERNS = ["*.py", "src/**/*.py", "docs/", "**/gate*.y*ml", "*.egg-info", "deep/*", "/src/a.py", "tests/**",
            "a.py", "**/deep/**/*.md", "src/*", "!src/a.py", "!*.md", "*.md", "docs/**/*.md", "[ab].py"]
paths = st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=4).map("/".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(paths, min_size=1, max_size=60, unique=True), st.lists(st.sampled_from(PATTERNS), min_size=1,
                                                                        max_size=6))
def test_match_files_agrees_with_pathspec(files: list[str], patterns: list[str]) -> None:
    spec = pathspec.GitIgnoreSpec.from_lines(patterns)
    assert match_files(files, patterns) == [f for f in files if spec.match_file(f)]


def test_directory_suffix_glob_matches_files_beneath() -> None:
    assert match_files(["pkg.egg-info/PKG-INFO", "src/a.py"], ["*.egg-info"]) == ["pkg.egg-info/PKG-INFO"]


def test_invalid_globs_are_reported() -> None:
    ((key, message),) = glob_errors({"glob": ["ok/*.py", "!"]}, "glob")
    assert key == "glob" and message.startswith("invalid glob '!'")
    (error,) = glob_errors({"glob": ["docs\\"]}, "glob")
    assert error[1].startswith("invalid glob 'docs\\\\'")
