"""The values word expansion works with: what stays fixed for one decision (Env), what a shell carries from one
command to the next (Ctx), and an expanded word (Val). expand.py computes them; every reader of a command line
passes them around."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Env:
    """What stays fixed for one decision: the repository root, the home directory, the environment."""

    root: str
    home: str
    environ: Mapping[str, str] = field(default_factory=dict)
    temp: tuple[str, ...] = ("/tmp", "/var/tmp", "/private/tmp", "/private/var/tmp", "/dev/shm")


@dataclass
class Ctx:
    """What a shell carries from one command to the next: the working directory, variables and arrays, and what
    earlier commands of the same line left behind (downloads, files written, symlinks made)."""

    cwd: str | None  # None: unknown (after `cd "$(something)"`)
    vars: dict[str, str | None] = field(default_factory=dict)  # None: assigned, value unknown
    remote: bool = False  # ssh host ..., docker exec ...: paths are on another machine
    depth: int = 0
    downloads: set[str] = field(default_factory=set)  # files written by curl/wget earlier in the line
    tainted: set[str] = field(default_factory=set)  # variables holding downloaded text: X=$(curl ...)
    arrays: dict[str, list[str] | None] = field(default_factory=dict)  # a=(x y); "@": the positional parameters
    generated: set[str] = field(default_factory=set)  # variables holding a command's output: X=$(cmd)
    written: dict[str, str | None] = field(default_factory=dict)  # files written earlier: path -> text if known
    links: dict[str, str | None] = field(default_factory=dict)  # symlinks made earlier: path -> target if known
    edits: dict[str, list[str]] = field(default_factory=dict)  # files edited earlier: the texts the edit can insert
    lenient: bool = False  # analysing a file on disk: what it leaves unresolved is not held against it

    def child(self, remote: bool = False, deeper: bool = True) -> Ctx:
        depth = self.depth + deeper
        if remote:
            return Ctx(None, {}, True, depth)
        return Ctx(self.cwd, dict(self.vars), self.remote, depth, self.downloads, set(self.tainted),
                   dict(self.arrays), set(self.generated), self.written, self.links, self.edits, self.lenient)


@dataclass
class Val:
    """An expanded word. Unknown expansions stay in `text` as written (`$X`, `$(cmd)`), so a nested `sh -c` string
    re-parses to the same thing."""

    text: str
    unknown_at: int | None = None  # where the first expansion with an unknown value starts
    glob_at: int | None = None  # where the first unquoted glob character is
    subs: list[str] = field(default_factory=list)  # bodies of $(...), `...`, <(...), >(...)
    dl: bool = False  # set by the walker: a substitution in this word runs a downloader
    split: bool = False  # an expansion split the word into fields (IFS, "$@", "${a[@]}")
    fields: list[str] = field(default_factory=list)  # the fields, when split
    unknown_kind: str = ""  # the first unknown expansion: "cmd" (a command's output), "var", "required" (${X:?})

    @property
    def known(self) -> bool:
        return self.unknown_at is None

    def words(self) -> list[Val]:
        """The fields after word splitting (only a fully known value is split)."""
        if not self.split or not self.known:
            return [self]
        return [Val(text, subs=self.subs, dl=self.dl) for text in self.fields if text]


def with_params(ctx: Ctx, params: list[Val]) -> Ctx:
    """sh -c CODE NAME ARG...: $0 is NAME, $1... the ARGs."""
    for i, val in enumerate(params):
        ctx.vars[str(i)] = val.text if val.known else None
    rest = params[1:]
    if params:
        ctx.arrays["@"] = [v.text for v in rest] if all(v.known for v in rest) else None
        ctx.vars["#"] = str(len(rest))
    return ctx
