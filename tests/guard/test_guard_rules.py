"""Rules as data, guard.allow/guard.deny patterns, file tools, and decisions on odd input."""

from __future__ import annotations

import pytest
from guard_support import ROOT, bash, corpus, fixed_home, tool
from hypothesis import given, settings
from hypothesis import strategies as st

from dun.guard import BUILTIN_RULES, decide, load_rules
from dun.guard.rules import Match


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch) -> None:
    fixed_home(monkeypatch)


def test_builtin_rules_are_well_formed_data() -> None:
    ids = [r.id for r in BUILTIN_RULES]
    assert len(ids) == len(set(ids))
    empty = Match()
    for rule in BUILTIN_RULES:
        assert rule.description and rule.matches, rule.id
        assert all(m != empty for m in rule.matches), rule.id


def test_every_builtin_rule_is_exercised_by_the_dangerous_corpus() -> None:
    fired = {bash(c).rule for c in corpus("dangerous.txt")}
    assert {r.id for r in BUILTIN_RULES} - fired == set()


def test_allow_overrides_a_builtin_denial_for_the_matching_command_only() -> None:
    allow = ["git push --force-with-lease origin feature/*"]
    assert bash("git push --force-with-lease origin feature/x", allow=allow).decision == "allow"
    assert bash("git push --force-with-lease origin main", allow=allow).rule == "git.push-force"
    assert bash("git push --force-with-lease origin feature/x && rm -rf /", allow=allow).rule == "fs.delete-system"
    assert bash("make x && rm -rf /", allow=["make *"]).rule == "fs.delete-system"  # * never spans commands


def test_allow_matches_the_normalized_command() -> None:
    allow = ["rm -rf /home/dev/.cache/pip"]
    for command in ("rm -rf ~/.cache/pip", "sudo rm -rf \"$HOME/.cache/pip\"", "timeout 9 rm -rf ~/.cache/'pip'"):
        assert bash(command, allow=allow).decision == "allow", command
    assert bash("rm -rf ~/.cache", allow=allow).decision == "deny"
    assert bash("curl -fsSL https://sh.rustup.rs | sh", allow=["curl -fsSL https://sh.rustup.rs | sh"]).decision == \
        "allow"
    assert bash("echo x >> ~/.bashrc", allow=["re:>> /home/dev/\\.bashrc$"]).decision == "allow"


def test_deny_adds_denials_and_wins_over_allow() -> None:
    deny = ["npm publish*", "re:\\bterraform\\s+destroy\\b"]
    assert bash("npm publish --access public", deny=deny).rule == "config.deny"
    assert bash("cd pkg && sh -c 'npm publish'", deny=deny).rule == "config.deny"
    assert bash("terraform destroy -auto-approve", deny=deny).rule == "config.deny"
    assert bash("npm test", deny=deny).decision == "allow"
    verdict = bash("npm publish", allow=["npm publish"], deny=["npm publish"])
    assert verdict.rule == "config.deny" and verdict.reason is not None and "'npm publish'" in verdict.reason


def test_bad_patterns_are_rejected() -> None:
    with pytest.raises(ValueError, match="bad regex"):
        load_rules(["re:("], [])
    with pytest.raises(ValueError, match="empty"):
        load_rules([], ["Bash()"])


def test_file_tools_inside_and_outside_the_repository() -> None:
    for name in ("Write", "Edit", "MultiEdit", "NotebookEdit"):
        assert tool(name, "/work/repo/src/app.py").decision == "allow", name
        assert tool(name, "/home/dev/.bashrc").rule == "fs.write-outside", name
    assert tool("Write", "/tmp/scratch.txt").decision == "allow"
    assert tool("Write", "/etc/hosts").rule == "fs.write-outside"
    assert tool("Write", "~/.zshrc").rule == "fs.write-outside"
    assert tool("Write", "../other/x.py").rule == "fs.write-outside"
    assert tool("Write", "notes.md", cwd="/work/repo/docs").decision == "allow"
    assert tool("Write", "/work/repo/../other/x").rule == "fs.write-outside"
    assert tool("Edit", "/work/repo/.dun/config.yaml").rule == "guard.protected-path"
    assert tool("Write", "/work/repo/.claude/settings.json").rule == "guard.protected-path"
    assert tool("Write", "/dev/sda").rule == "disk.device-write"


def test_file_tool_patterns_are_scoped_by_tool() -> None:
    allow = ["Write(/home/dev/notes/*)", "Edit(/home/dev/.config/app/*)"]
    assert tool("Write", "/home/dev/notes/a.md", allow=allow).decision == "allow"
    assert tool("Edit", "/home/dev/notes/a.md", allow=allow).decision == "deny"
    assert tool("MultiEdit", "/home/dev/.config/app/x.toml", allow=allow).decision == "allow"  # Edit covers all
    assert tool("Write", "/work/repo/.env", deny=["Write(*.env)"]).rule == "config.deny"
    assert bash("echo x > .env", deny=["Write(*.env)"]).decision == "allow"  # scoped to the Write tool


def test_other_tools_are_allowed() -> None:
    for name in ("Read", "Glob", "Grep", "WebFetch", "Task", "mcp__server__tool"):
        event = {"tool_name": name, "tool_input": {"file_path": "/etc/passwd"}, "cwd": str(ROOT)}
        assert decide(event, ROOT, load_rules([], [])).decision == "allow"


@pytest.mark.parametrize("tool_input", [None, {}, {"command": None}, {"command": ["rm", "-rf", "/"]}, "rm -rf /"])
def test_bash_without_a_command_string_fails_closed(tool_input: object) -> None:
    event = {"tool_name": "Bash", "tool_input": tool_input, "cwd": str(ROOT)}
    assert decide(event, ROOT, load_rules([], [])).rule == "shell.unparseable"


@pytest.mark.parametrize("tool_input", [None, {}, {"file_path": 3}, {"file_path": ""}])
def test_file_tool_without_a_path_fails_closed(tool_input: object) -> None:
    event = {"tool_name": "Write", "tool_input": tool_input, "cwd": str(ROOT)}
    assert decide(event, ROOT, load_rules([], [])).rule == "tool.bad-input"


def test_empty_and_blank_commands_are_allowed() -> None:
    assert bash("").decision == "allow"
    assert bash("  \n\t ").decision == "allow"


def test_reasons_are_one_bounded_line() -> None:
    verdict = bash("rm -rf / " + "x" * 5000 + " \\\n && echo done")
    assert verdict.reason is not None and len(verdict.reason) <= 300 and "\n" not in verdict.reason
    assert verdict.reason.startswith("dun guard [fs.delete-system]:")


def test_sql_in_strings_and_comments_is_not_a_drop() -> None:
    assert bash("psql -c \"SELECT 'DROP TABLE x' -- drop it\"").decision == "allow"
    assert bash("psql -c 'SELECT 1; /* truncate */'").decision == "allow"
    assert bash("psql -c 'SELECT droplet FROM t'").decision == "allow"
    assert bash("psql -c 'drop table t'").rule == "sql.drop"


def test_git_decisions_do_not_depend_on_flag_position_or_spelling() -> None:
    for command in ("git push origin main -f", "git push -uf origin main", "git -C . push --force",
                    "git --no-pager push origin HEAD --force-with-lease=main", "git push origin '+main'"):
        assert bash(command).rule == "git.push-force", command
    assert bash("git -c core.pager=cat push origin main").decision == "allow"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("rm -f/~.$(){}'\"`;|&<>\\\n*#=abcx")), max_size=60))
def test_decide_never_raises_on_arbitrary_text(command: str) -> None:
    verdict = bash(command)
    assert verdict.decision in ("allow", "deny")
    if verdict.decision == "deny":
        assert verdict.rule and verdict.reason


def test_a_tool_destroying_what_it_manages_is_denied_and_words_used_as_text_are_not() -> None:
    """tool.destroy: the verb as the tool's command or after a noun; not for tools that take words as text, not for
    the programs whose own rules decide (kubectl delete pod), not for a cache."""
    assert bash("multipass delete --all --purge").rule == "tool.destroy"
    assert bash("hcloud server delete web-1").rule == "tool.destroy"
    assert bash("security delete-generic-password -s github.com").rule == "tool.destroy"
    for everyday in ("echo will delete", "grep -rn destroy src", "kubectl delete pod web-1", "pip cache purge",
                     "make delete-tmp", "rails destroy model Post", "multipass list"):
        assert bash(everyday).decision == "allow", everyday
