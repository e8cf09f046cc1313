"""`dun check` on the current directory starts git before click loads; any PATH argument turns that off."""

from __future__ import annotations

import pytest

from dun.entry import _checks_here


@pytest.mark.parametrize(("args", "early"), [
    (["check"], True),
    (["check", "--format", "json", "--only", "x", "-j", "2", "--no-cache"], True),
    (["check", "--format=json", "-v"], True),
    (["check", "some/repo"], False),
    (["check", "-f", "json", "some/repo"], False),
    (["iterate"], False),
    ([], False),
])
def test_only_check_without_a_path_starts_early(args: list[str], early: bool) -> None:
    assert _checks_here(args) is early
