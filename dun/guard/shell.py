"""Parse a command line into pipelines of simple commands and groups.

Control flow is kept only as far as the guard needs it: every command in every branch of `if`, `while`, `for`,
`case`, `&&` and `||` is analysed (a branch that might run is treated as running), subshells and brace groups are
groups (so `( ... ) | sh` and `{ ...; } > file` keep their meaning), and function bodies are analysed where defined.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dun.guard.lexer import Heredoc, ShellError, Token, Word, tokenize

__all__ = ["Group", "Pipeline", "Redirect", "ShellError", "Simple", "parse"]

_SEPARATORS = ("&&", "||", ";", "&")
_CASE_ENDS = (";;", ";&", ";;&")


@dataclass
class Redirect:
    op: str
    fd: str
    target: Word
    heredoc: Heredoc | None = None


@dataclass
class Simple:
    words: list[Word]
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class Group:
    body: list[Pipeline]
    subshell: bool
    redirects: list[Redirect] = field(default_factory=list)
    words: list[Word] = field(default_factory=list)  # `for`/`case`/`[[` words: only their substitutions matter
    loop_vars: list[str] = field(default_factory=list)
    function: str = ""  # a function definition: its name


@dataclass
class Pipeline:
    stages: list[Simple | Group]


def parse(src: str) -> list[Pipeline]:
    parser = _Parser(tokenize(src))
    out = parser.parse_list(frozenset(), in_paren=False)
    if parser.peek() is not None:
        raise ShellError(f"unexpected {parser.describe()}")
    return out


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.toks = tokens
        self.pos = 0

    def peek(self) -> Token | None:
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def describe(self) -> str:
        tok = self.peek()
        if tok is None:
            return "end of command"
        return repr(tok.word.raw if tok.word is not None and tok.kind == "word" else tok.text or tok.kind)

    def next(self) -> Token:
        tok = self.peek()
        if tok is None:
            raise ShellError("unexpected end of command")
        self.pos += 1
        return tok

    def is_op(self, *ops: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.kind == "op" and tok.text in ops

    def is_word(self, *names: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.kind == "word" and tok.word is not None and tok.word.is_reserved(*names)

    def expect_word(self, name: str) -> None:
        if not self.is_word(name):
            raise ShellError(f"expected '{name}', found {self.describe()}")
        self.pos += 1

    def skip_newlines(self) -> None:
        while (tok := self.peek()) is not None and tok.kind == "newline":
            self.pos += 1

    def parse_list(self, stop: frozenset[str], in_paren: bool, in_case: bool = False) -> list[Pipeline]:
        out: list[Pipeline] = []
        while (tok := self.peek()) is not None:
            if tok.kind == "newline" or self.is_op(";", "&"):
                self.pos += 1
                continue
            if self.ends_list(stop, in_paren, in_case):
                break
            out.append(self.parse_pipeline())
            if self.is_op("&&", "||"):
                self.pos += 1
                self.skip_newlines()
                if self.peek() is None:
                    raise ShellError("command ends with && or ||")
            elif not (self.peek() is None or self.is_op(*_SEPARATORS, ")", *_CASE_ENDS) or self.is_word(*stop)
                      or self.peek_kind("newline")):
                raise ShellError(f"unexpected {self.describe()}")
        return out

    def ends_list(self, stop: frozenset[str], in_paren: bool, in_case: bool) -> bool:
        return (in_paren and self.is_op(")")) or (in_case and self.is_op(*_CASE_ENDS)) or bool(
            stop and self.is_word(*stop))

    def peek_kind(self, kind: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.kind == kind

    def parse_pipeline(self) -> Pipeline:
        if self.is_word("!", "time"):
            self.pos += 1
            while self.is_word("-p", "--"):
                self.pos += 1
        stages = [self.parse_command()]
        while self.is_op("|", "|&"):
            self.pos += 1
            self.skip_newlines()
            stages.append(self.parse_command())
        return Pipeline(stages)

    def parse_command(self) -> Simple | Group:
        if self.is_op("("):
            self.pos += 1
            body = self.parse_list(frozenset(), in_paren=True)
            if not self.is_op(")"):
                raise ShellError("unterminated subshell")
            self.pos += 1
            return self.redirects(Group(body, subshell=True))
        tok = self.peek()
        if tok is not None and tok.kind == "word" and tok.word is not None:
            compound = self.compound(tok.word)
            if compound is not None:
                return self.redirects(compound)
        return self.simple()

    def redirects(self, group: Group) -> Group:
        while (tok := self.peek()) is not None and tok.kind == "redir" and tok.word is not None:
            self.pos += 1
            group.redirects.append(Redirect(tok.text, tok.fd, tok.word, tok.heredoc))
        return group

    def block(self, *stops: str) -> list[Pipeline]:
        return self.parse_list(frozenset(stops), in_paren=False)

    def compound(self, word: Word) -> Group | None:
        if word.is_reserved("coproc"):  # coproc [NAME] COMMAND: NAME only before a compound command
            self.pos += 1
            after = self.toks[self.pos + 1] if self.pos + 1 < len(self.toks) else None
            named = after is not None and (after.text == "(" or (after.word is not None and after.word.is_reserved(
                "{", "while", "for", "if")))
            if self.peek_kind("word") and named:
                self.pos += 1
            return Group([Pipeline([self.parse_command()])], subshell=False)
        if word.is_reserved("{"):
            self.pos += 1
            body = self.block("}")
            self.expect_word("}")
            return Group(body, subshell=False)
        if word.is_reserved("if"):
            self.pos += 1
            body = self.block("then")
            self.expect_word("then")
            body += self.block("elif", "else", "fi")
            while self.is_word("elif", "else"):
                is_elif = self.is_word("elif")
                self.pos += 1
                body += self.block("then") if is_elif else self.block("fi")
                if is_elif:
                    self.expect_word("then")
                    body += self.block("elif", "else", "fi")
            self.expect_word("fi")
            return Group(body, subshell=False)
        if word.is_reserved("while", "until"):
            self.pos += 1
            body = self.block("do")
            return self.do_done(Group(body, subshell=False))
        if word.is_reserved("for", "select"):
            return self.for_loop()
        if word.is_reserved("case"):
            return self.case()
        if word.is_reserved("[["):
            self.pos += 1
            words: list[Word] = []
            while not self.is_word("]]"):
                tok = self.next()
                if tok.word is not None:
                    words.append(tok.word)
            self.pos += 1
            return Group([], subshell=False, words=words)
        if word.is_reserved("function"):
            self.pos += 1
            name = self.next()
            if self.is_op("("):
                self.pos += 1
                if not self.is_op(")"):
                    raise ShellError("bad function definition")
                self.pos += 1
            self.skip_newlines()
            return Group([Pipeline([self.parse_command()])], subshell=False,
                         function=name.word.raw if name.word is not None else "")
        if word.is_reserved("then", "do", "done", "fi", "elif", "else", "esac", "}", "in", "]]"):
            raise ShellError(f"unexpected '{word.raw}'")
        return None

    def do_done(self, group: Group) -> Group:
        self.skip_newlines()
        self.expect_word("do")
        group.body += self.block("done")
        self.expect_word("done")
        return group

    def for_loop(self) -> Group:
        self.pos += 1
        group = Group([], subshell=False)
        if self.is_op("("):  # for (( i = 0; i < n; i++ ))
            depth = 0
            while True:
                op = self.next()
                depth += (op.kind == "op" and op.text == "(") - (op.kind == "op" and op.text == ")")
                if depth == 0:
                    break
        else:
            name = self.next()
            if name.word is None:
                raise ShellError("bad for loop")
            group.loop_vars.append(name.word.raw)
            self.skip_newlines()
            if self.is_word("in"):
                self.pos += 1
                while (tok := self.peek()) is not None and tok.kind == "word" and tok.word is not None:
                    group.words.append(tok.word)
                    self.pos += 1
        if self.is_op(";"):
            self.pos += 1
        if self.is_word("{"):  # bash also accepts for x in y; { ...; }
            self.pos += 1
            group.body += self.block("}")
            self.expect_word("}")
            return group
        return self.do_done(group)

    def case(self) -> Group:
        self.pos += 1
        subject = self.next()
        group = Group([], subshell=False, words=[subject.word] if subject.word is not None else [])
        self.skip_newlines()
        self.expect_word("in")
        while True:
            self.skip_newlines()
            if self.is_word("esac"):
                self.pos += 1
                return group
            if self.is_op("("):
                self.pos += 1
            while not self.is_op(")"):  # the patterns
                tok = self.next()
                if tok.kind == "word" and tok.word is not None:
                    group.words.append(tok.word)
                elif not (tok.kind == "op" and tok.text == "|"):
                    raise ShellError("bad case pattern")
            self.pos += 1
            group.body += self.parse_list(frozenset({"esac"}), in_paren=False, in_case=True)
            if self.is_op(*_CASE_ENDS):
                self.pos += 1

    def simple(self) -> Simple | Group:
        cmd = Simple([])
        while (tok := self.peek()) is not None:
            if tok.kind == "word" and tok.word is not None:
                cmd.words.append(tok.word)
            elif tok.kind == "redir" and tok.word is not None:
                cmd.redirects.append(Redirect(tok.text, tok.fd, tok.word, tok.heredoc))
            elif tok.kind == "op" and tok.text == "(" and len(cmd.words) == 1 and not cmd.redirects:
                self.pos += 1  # name() compound-command: a function definition
                if not self.is_op(")"):
                    raise ShellError("unexpected '('")
                self.pos += 1
                self.skip_newlines()
                return Group([Pipeline([self.parse_command()])], subshell=False, function=cmd.words[0].raw)
            else:
                break
            self.pos += 1
        if not cmd.words and not cmd.redirects:
            raise ShellError(f"expected a command, found {self.describe()}")
        return cmd
