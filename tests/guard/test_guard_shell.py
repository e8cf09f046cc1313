"""The guard's shell parser: quoting, operators, nesting, here-documents, and what it refuses to read."""

from __future__ import annotations

import pytest
from guard_support import bash, fixed_home

from dun.guard.expand import Ctx, Env, expand
from dun.guard.lexer import CMD, LIT, PROC, QUOTED, VAR, Word
from dun.guard.shell import Group, Pipeline, ShellError, Simple, parse


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch) -> None:
    fixed_home(monkeypatch)


def simple_words(src: str) -> list[list[str]]:
    """Every simple command (flattening groups) as its words' raw text."""
    out: list[list[str]] = []

    def walk(pipelines: list[Pipeline]) -> None:
        for p in pipelines:
            for stage in p.stages:
                if isinstance(stage, Group):
                    walk(stage.body)
                else:
                    out.append([w.raw for w in stage.words])

    walk(parse(src))
    return out


def value(word: Word) -> str:
    return expand(word, Ctx("/work/repo"), Env("/work/repo", "/home/dev")).text


def test_operators_split_commands() -> None:
    assert simple_words("a && b || c; d & e | f |& g") == [["a"], ["b"], ["c"], ["d"], ["e"], ["f"], ["g"]]
    assert simple_words("a\nb\n\nc") == [["a"], ["b"], ["c"]]


def test_quotes_and_escapes_are_removed_but_keep_words_together() -> None:
    (cmd,) = parse("echo 'a b' \"c d\" e\\ f $'g\\th' \"x\\\"y\" 'it'\\''s'")[0].stages
    assert isinstance(cmd, Simple)
    assert [value(w) for w in cmd.words] == ["echo", "a b", "c d", "e f", "g\th", 'x"y', "it's"]


def test_single_quotes_keep_substitutions_literal_double_quotes_do_not() -> None:
    (cmd,) = parse("echo '$(rm -rf /)' \"$(rm -rf /)\" `ls`")[0].stages
    assert isinstance(cmd, Simple)
    kinds = [[p.kind for p in w.parts] for w in cmd.words[1:]]
    assert kinds == [[QUOTED], [CMD], [CMD]]
    assert bash("echo '$(rm -rf /)'").decision == "allow"
    assert bash('echo "$(rm -rf /)"').rule == "fs.delete-system"
    assert bash("echo `rm -rf /`").rule == "fs.delete-system"


def test_nested_substitutions_and_parentheses() -> None:
    (cmd,) = parse('echo "$(echo "$(date)" | tr a-z A-Z)" $(( 1 + (2 * 3) ))')[0].stages
    assert isinstance(cmd, Simple)
    assert cmd.words[1].parts[0].kind == CMD
    assert cmd.words[1].parts[0].text == 'echo "$(date)" | tr a-z A-Z'
    assert bash('echo "$(echo "$(rm -rf ~)")"').rule == "fs.delete-system"


def test_variables_and_tilde() -> None:
    (cmd,) = parse('ls ~/x "$HOME"/y ${HOME} ~other/z "~" $UNSET_GUARD_VAR')[0].stages
    assert isinstance(cmd, Simple)
    assert [value(w) for w in cmd.words[1:6]] == ["/home/dev/x", "/home/dev/y", "/home/dev", "/home/other/z", "~"]
    assert cmd.words[6].parts[0].kind == VAR


def test_redirections_are_not_words() -> None:
    (cmd,) = parse("cmd a 2>&1 >out.txt 2>>err.log <in &>all >|clobber")[0].stages
    assert isinstance(cmd, Simple)
    assert [w.raw for w in cmd.words] == ["cmd", "a"]
    assert [(r.fd, r.op, r.target.raw) for r in cmd.redirects] == [
        ("2", ">&", "1"), ("", ">", "out.txt"), ("2", ">>", "err.log"), ("", "<", "in"), ("", "&>", "all"),
        ("", ">|", "clobber")]


def test_heredocs_are_read_with_their_bodies() -> None:
    (pipeline, after) = parse("cat <<EOF | psql\nDROP TABLE x;\nEOF\necho after")
    first = pipeline.stages[0]
    assert isinstance(first, Simple)
    heredoc = first.redirects[0].heredoc
    assert heredoc is not None and heredoc.body == "DROP TABLE x;\n" and not heredoc.quoted
    assert [w.raw for w in after.stages[0].words] == ["echo", "after"]  # type: ignore[union-attr]
    quoted = parse("cat <<-'END'\n\t$(rm -rf /)\n\tEND")[0].stages[0]
    assert isinstance(quoted, Simple) and quoted.redirects[0].heredoc is not None
    assert quoted.redirects[0].heredoc.quoted and quoted.redirects[0].heredoc.body == "$(rm -rf /)\n"
    assert bash("cat <<'EOF'\n$(rm -rf /)\nEOF").decision == "allow"
    assert bash("cat <<EOF\n$(rm -rf /)\nEOF").rule == "fs.delete-system"


def test_groups_and_compound_commands() -> None:
    assert simple_words("(cd / && rm x) | { a; b; }") == [["cd", "/"], ["rm", "x"], ["a"], ["b"]]
    assert simple_words("if a; then b; elif c; then d; else e; fi") == [["a"], ["b"], ["c"], ["d"], ["e"]]
    assert simple_words("for f in *.py; do echo $f; done") == [["echo", "$f"]]
    assert simple_words("while read l; do echo $l; done < file") == [["read", "l"], ["echo", "$l"]]
    assert simple_words("case $x in a|b) one;; *) two;; esac") == [["one"], ["two"]]
    assert simple_words("f() { body; }; f") == [["body"], ["f"]]
    assert simple_words("function g { body; }") == [["body"]]
    assert simple_words("[[ -f x && -d y ]] && ok") == [["ok"]]
    assert simple_words("! grep -q x f; time make") == [["grep", "-q", "x", "f"], ["make"]]


def test_process_substitution_is_a_word() -> None:
    (cmd,) = parse("diff <(sort a) >(cat)")[0].stages
    assert isinstance(cmd, Simple)
    assert [(p.kind, p.text) for w in cmd.words[1:] for p in w.parts] == [(PROC, "<sort a"), (PROC, ">cat")]


def test_comments_and_continuations() -> None:
    assert simple_words("ls # rm -rf /") == [["ls"]]
    assert simple_words("echo a#b") == [["echo", "a#b"]]
    assert simple_words("rm \\\n  -rf \\\n  build") == [["rm", "-rf", "build"]]
    assert bash("ls # rm -rf /").decision == "allow"


def test_assignments_and_arrays() -> None:
    (cmd,) = parse("A=1 B=(x y) env")[0].stages
    assert isinstance(cmd, Simple)
    assert [w.raw for w in cmd.words] == ["A=1", "B=(x y)", "env"]
    assert cmd.words[0].parts[0].kind == LIT


@pytest.mark.parametrize("src", [
    "echo 'unterminated", 'echo "unterminated', "echo $(unterminated", "echo `unterminated", "( rm -rf /",
    "rm -rf /)", "| sh", "&& ls", "ls &&", "echo ${unterminated", "if true; then ls", "for x in a; do ls",
    "case x in a) ls;;", "ls >", "ls ;; ls", "echo 'a' )",
])
def test_unreadable_shell_is_an_error(src: str) -> None:
    with pytest.raises(ShellError):
        parse(src)
    verdict = bash(src)
    assert verdict.decision == "deny" and verdict.rule == "shell.unparseable"


def test_sh_c_and_eval_are_parsed_recursively() -> None:
    assert bash("sh -c 'echo hi && rm -rf /'").rule == "fs.delete-system"
    assert bash("bash -euxo pipefail -c 'rm -rf ~'").rule == "fs.delete-system"
    assert bash("sh -c \"sh -c 'bash -c \\\"rm -rf /\\\"'\"").rule == "fs.delete-system"
    assert bash("eval rm -rf '~'").rule == "fs.delete-system"
    assert bash("sh -c 'rm -rf \"$1\"' _ /").rule == "fs.delete-system"
    assert bash("sh -c 'echo hello && ls'").decision == "allow"
    assert bash("echo 'rm -rf /' | sh").rule == "fs.delete-system"
    assert bash("bash <<< 'rm -rf /'").rule == "fs.delete-system"


def test_wrappers_are_stripped() -> None:
    for prefix in ("sudo", "sudo -u root", "sudo -E -H --", "env", "env -i FOO=1", "nohup", "timeout 5",
                   "timeout -k 1 5s", "command", "exec", "nice -n 5", "xargs", "stdbuf -oL", "time", "doas",
                   "sudo env FOO=bar timeout 10 nohup nice"):
        assert bash(f"{prefix} rm -rf /").rule == "fs.delete-system", prefix
    assert bash("command -v rm").decision == "allow"
    assert bash("sudo -l").decision == "allow"


def test_variables_and_cd_are_followed_in_order() -> None:
    assert bash("X=/; rm -rf $X").rule == "fs.delete-system"
    assert bash("X=build; rm -rf $X").decision == "allow"
    assert bash("cd /tmp && rm -rf x").decision == "allow"
    assert bash("cd / && rm -rf tmp/x").decision == "allow"
    assert bash("cd / && rm -rf etc").rule == "fs.delete-system"
    assert bash("(cd /tmp); rm -rf x").decision == "allow"  # the cd happened in a subshell, x is in the repo
    assert bash("cd $(mktemp -d) && rm -rf *").decision == "allow"
    assert bash('cd "$SOMEWHERE_UNKNOWN" && rm -rf build').rule == "fs.delete-unresolved"


def test_deep_nesting_fails_closed() -> None:
    src = "echo " + "$(echo " * 40 + "x" + ")" * 40
    assert bash(src).rule == "shell.unparseable"
    assert bash("(" * 2000 + "ls" + ")" * 2000).rule == "shell.unparseable"


def test_loops_are_unrolled_over_known_values_within_a_bound() -> None:
    assert bash("for d in build dist; do rm -rf $d; done").decision == "allow"
    assert bash("for d in build /; do rm -rf $d; done").rule == "fs.delete-system"
    nested = " ".join(f"for v{i} in {' '.join(map(str, range(16)))}; do" for i in range(4))
    assert bash(f"{nested} echo $v0$v3; done; done; done; done").decision == "allow"


def test_too_much_work_fails_closed() -> None:
    assert bash("true; " * 6000).rule == "shell.unparseable"
