"""dun's shortcuts in glob matching must never change what pathspec (git's rules) would match."""

from __future__ import annotations

import subprocess
import sys

import pathspec
from hypothesis import given, settings
from hypothesis import strategies as st

from dun.core.globs import Listing, glob_errors, match_files

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


def listing(tracked: list[str], untracked: list[str], in_order: bool = True) -> Listing:
    return Listing("".join(p + "\0" for p in tracked), untracked, in_order)


@settings(max_examples=400, deadline=None)
@given(st.lists(paths, min_size=1, max_size=60, unique=True), st.lists(st.sampled_from(PATTERNS), min_size=1,
                                                                        max_size=6), st.integers(0, 60))
def test_a_listing_in_index_order_matches_as_pathspec_does(files: list[str], patterns: list[str], cut: int) -> None:
    """The index (sorted) is matched without splitting it, by literal prefix runs and suffix searches; the untracked
    files after it one by one. Same answer, same order as pathspec over the whole list."""
    tracked = sorted(files[:cut])
    files = tracked + files[cut:]
    spec = pathspec.GitIgnoreSpec.from_lines(patterns)
    expected = [f for f in files if spec.match_file(f)]
    assert match_files(listing(tracked, files[cut:]), patterns) == expected
    assert listing(tracked, files[cut:]).paths() == files
    # out of order (a non-ASCII index not in str's order, or an unmerged path listed per stage): still the same
    doubled = listing(tracked + tracked[:1], files[cut:], in_order=False)
    assert match_files(doubled, patterns) == expected


def test_directory_suffix_glob_matches_files_beneath() -> None:
    assert match_files(["pkg.egg-info/PKG-INFO", "src/a.py"], ["*.egg-info"]) == ["pkg.egg-info/PKG-INFO"]


def test_invalid_globs_are_reported() -> None:
    ((key, message),) = glob_errors({"glob": ["ok/*.py", "!"]}, "glob")
    assert key == "glob" and message.startswith("invalid glob '!'")
    (error,) = glob_errors({"glob": ["docs\\"]}, "glob")
    assert error[1].startswith("invalid glob 'docs\\\\'")


def test_a_directory_named_like_a_suffix_is_found_in_a_listing() -> None:
    files = listing(["a.py/inner.txt", "b/c.py", "b/d.txt"], ["u/x.py"])
    assert match_files(files, ["*.py"]) == ["a.py/inner.txt", "b/c.py", "u/x.py"]
    assert match_files(files, ["b/**/*.py"]) == ["b/c.py"]


def test_nested_prefixes_list_each_path_once() -> None:
    files = listing(["a/b/c.txt", "a/b/d.txt", "a/e.txt", "b/f.txt"], [])
    assert match_files(files, ["a/**/*.txt", "a/b/*.txt"]) == ["a/b/c.txt", "a/b/d.txt", "a/e.txt"]
    assert match_files(files, ["**/*.txt", "**/*.t*"]) == files.paths()


MATCH_ONCE = """
import sys
from dun.core.globs import match_files
print(match_files(["src/a.py", "src/b.txt", "c.py"], ["src/**/*.py"]), "pathspec" in sys.modules)
"""


def test_a_glob_list_seen_before_is_matched_without_pathspec() -> None:
    """The joined regex is kept in the cache directory: a later run need not import pathspec (10 ms)."""
    runs = [subprocess.run([sys.executable, "-c", MATCH_ONCE], capture_output=True, text=True, check=True).stdout
            for _ in range(2)]
    assert runs == ["['src/a.py'] True\n", "['src/a.py'] False\n"]
