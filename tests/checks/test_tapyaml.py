"""The TAP diagnostics read without a YAML library (dun/checks/parsers/tapyaml.py): what node's test runner and tape
write is read exactly as ruamel's safe loader reads it, and anything outside the plain subset is left to ruamel."""

from __future__ import annotations

import pytest
from ruamel.yaml import YAML

from dun.checks.parsers.tapyaml import load

NODE = """\
duration_ms: 3.480452
location: '/tmp/p/test/math.test.js:6:11'
failureType: 'testCodeFailure'
error: |-
  Expected values to be strictly equal:
<sp>
  2 !== 3
<sp>
code: 'ERR_ASSERTION'
name: 'AssertionError'
expected: 3
actual: 2
operator: 'strictEqual'
stack: |-
  TestContext.<anonymous> (/tmp/p/test/math.test.js:7:12)
  Test.runInAsyncScope (node:async_hooks:206:9)
  node:internal/test_runner/harness:255:12""".replace("<sp>", "  ")  # node indents a blank line of the block

NODE_DEEP = """\
duration_ms: 6.346776
location: '/tmp/p/test/math.test.js:14:1'
failureType: 'testCodeFailure'
error: |-
  Expected values to be strictly deep-equal:
  + actual - expected

    {
      a: 1,
  +     2
  -     3
    }
code: 'ERR_ASSERTION'
expected:
  a: 1
  b:
    0: 1
    1: 3
actual:
  a: 1
  b:
    0: 1
    1: 2
operator: 'deepStrictEqual'
error2: 'it''s quoted'"""

TAPE = """\
operator: equal
expected: 3
actual:   2
at: Test.<anonymous> (/tmp/p/test/math.js:6:5)
stack: |-
  Error: sum is wrong
      at Test.assert [as _assert] (/tmp/p/node_modules/tape/lib/test.js:548:48)
      at Test.<anonymous> (/tmp/p/test/math.js:6:5)"""

TAPE_DEEP = """\
operator: deepEqual
expected: |-
  { a: 1, b: [ 1, 3 ] }
actual: |
  { a: 1, b: [ 1, 2 ] }

at: Test.<anonymous> (/tmp/p/test/math.js:11:5)"""

# outside the subset: each left to ruamel (None here)
OTHER = [
    "ok: true", "value: null", "value: ~", "value:", "items:\n  - 1\n  - 2", 'message: "with \\"escapes\\""',
    "count: 007", "count: 1e3", "count: 0x1f", "count: +1", "ratio: .5", "key: 'unclosed", "a: b: c",
    "a: plain\n  continued", "# a comment\na: 1", "a: 1 # a comment", "a: |+\n  kept\n\n", "a: |2\n    x",
    "a:\tb", "a: 1\na: 2", "'quoted key': 1", "0: numbered", "a: |-\nb: 1", "a: x\n b: 1", "a: - item",
    "a: [1, 2]", "a: {b: 1}", "a: &anchor 1", "a: !tag 1", "a: @at", "a: `tick`", "", "\n\n",
    "a:\n    b: 1\n  c: 2", "a: |-\n    x\n  y", "a: |-\n     \n    x", "a: ends with colon:", "a: yes",
]


def ruamel(text: str) -> object:
    return YAML(typ="safe", pure=True).load(text)


@pytest.mark.parametrize("text", [NODE, NODE_DEEP, TAPE, TAPE_DEEP])
def test_node_and_tape_diagnostics_are_read_as_yaml_reads_them(text: str) -> None:
    assert load(text) is not None
    assert load(text) == ruamel(text)


@pytest.mark.parametrize("text", OTHER)
def test_anything_else_is_left_to_a_yaml_library(text: str) -> None:
    assert load(text) is None


def test_what_is_read_keeps_the_types_yaml_gives() -> None:
    deep = load(NODE_DEEP)
    assert deep is not None
    assert deep["expected"] == {"a": 1, "b": {0: 1, 1: 3}} and isinstance(deep["duration_ms"], float)
    assert deep["error2"] == "it's quoted"
    node = load(NODE)
    assert node is not None and node["error"] == "Expected values to be strictly equal:\n\n2 !== 3"
    tape = load(TAPE_DEEP)
    assert tape is not None and tape["actual"] == "{ a: 1, b: [ 1, 2 ] }\n" and tape["expected"] == (
        "{ a: 1, b: [ 1, 3 ] }")
