"""The co-change graph: files that changed together wire together. Pure data and arithmetic, no I/O.

Each change (a commit, or an iteration of the loop) that touches n files links every pair of them with weight
1/(n-1): a file spreads one unit over its partners, so a 2-file commit links strongly and a 20-file one weakly. A
change touching more than `max_files` files links nothing (a mass rename or a formatting pass would wire everything
to everything), though it still counts as a change of each file.

Recency: the weight of change number s is exp(λ·s), λ = ln 2 / half_life. Every weight of the graph scales by the
same exp(-λ·now) when read, so a ranking never needs it: a link made `half_life` changes ago counts half of one made
now, and adding a change never touches older weights. `base` keeps the exponents small (see `_rescale`).

A file's hints for a seed q: the direct strength conf(q→b) = W(q,b) / C(q) (the recency-weighted share of q's
changes that also changed b), plus a second hop: each of q's strongest partners b passes its own partners c on at
HOP · conf(q→b) · conf(b→c) / (1 + ln(1 + fan-out(b))), so a hub that changes with everything spreads little.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

DEFAULT_HALF_LIFE = 1000  # changes
HOP = 0.5  # what a second-hop link is worth against a direct one
HOP_SEEDS = 8  # the strongest direct partners whose own partners are followed
HOP_FANOUT = 24  # of each, its strongest partners followed
_MAX_EXPONENT = 600.0  # exp(600) ~ 1e260: rescale every weight before a float overflows
CHECK_PREFIX = "check:"  # a check the loop worked on is a node too: it links to the files changed for it


@dataclass(frozen=True)
class Hint:
    """A file that often changes with the seed: its score, its direct share of the seed's changes (0 when it comes
    only through a second hop) and, for those, the partner it came through."""

    path: str
    score: float
    direct: float
    via: str | None = None


@dataclass
class Graph:
    half_life: int = DEFAULT_HALF_LIFE
    max_files: int = 30
    seq: int = 0  # changes seen
    base: int = 0  # weights are stored as exp(λ·(s - base))
    paths: list[str] = field(default_factory=list)
    count: list[float] = field(default_factory=list)  # C: weighted changes of each node
    edges: list[dict[int, float]] = field(default_factory=list)  # W: weighted links of each node
    dead: set[int] = field(default_factory=set)  # files deleted since their last change: never hinted
    ids: dict[str, int] = field(default_factory=dict)
    _top: dict[int, list[tuple[float, int]]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if not self.ids:
            self.ids = {p: i for i, p in enumerate(self.paths)}

    @property
    def rate(self) -> float:
        return math.log(2) / max(1, self.half_life)

    def node(self, path: str) -> int:
        i = self.ids.get(path)
        if i is None:
            i = self.ids[path] = len(self.paths)
            self.paths.append(path)
            self.count.append(0.0)
            self.edges.append({})
        return i

    # -- learning ---------------------------------------------------------------------------------------------------
    def add(self, files: Iterable[str], tags: Iterable[str] = (), link_files: bool = True) -> bool:
        """One change of `files` (and of `tags`, e.g. the check it was for, linked to each file). With
        `link_files` false only the tags are linked (the files' own links came from git already). False when the
        change is too large to link anything."""
        names = list(dict.fromkeys(f for f in files if f))
        marks = list(dict.fromkeys(t for t in tags if t))
        self.seq += 1
        if self.rate * (self.seq - self.base) > _MAX_EXPONENT:
            self._rescale()
        weight = math.exp(self.rate * (self.seq - self.base))
        if len(names) > self.max_files:  # counts for the files known, makes no node (an import of 50,000 files)
            for name in names:
                known = self.ids.get(name)
                if known is not None:
                    self.count[known] += weight
                    self.dead.discard(known)
            return False
        ids = [self.node(n) for n in names]
        for i in ids:
            self.dead.discard(i)
        tag_ids = [self.node(t) for t in marks]
        for i in ids + tag_ids:
            self.count[i] += weight
        if link_files and len(ids) > 1:
            self._link(ids, ids, weight / (len(ids) - 1))
        if tag_ids and ids:
            self._link(tag_ids, ids, weight / len(ids))
            self._link(ids, tag_ids, weight / len(tag_ids))
        return True

    def _link(self, sources: list[int], targets: list[int], weight: float) -> None:
        for a in sources:
            row = self.edges[a]
            for b in targets:
                if a != b:
                    row[b] = row.get(b, 0.0) + weight
            self._top.pop(a, None)

    def delete(self, path: str) -> None:
        i = self.ids.get(path)
        if i is not None:
            self.dead.add(i)

    def rename(self, old: str, new: str) -> None:
        """`old` is now `new`: its links go with it (merged into `new`'s when both are known)."""
        i = self.ids.get(old)
        if i is None or old == new:
            return
        j = self.ids.get(new)
        del self.ids[old]
        if j is None:
            self.ids[new] = i
            self.paths[i] = new
            return
        self.count[j] += self.count[i]
        self.count[i] = 0.0
        for b, w in self.edges[i].items():
            if b != j:
                self.edges[j][b] = self.edges[j].get(b, 0.0) + w
                back = self.edges[b]
                back[j] = back.get(j, 0.0) + back.pop(i, 0.0)
                self._top.pop(b, None)
            else:
                self.edges[j].pop(i, None)
        self.edges[i] = {}
        self.dead.add(i)
        self.paths[i] = ""
        self._top.pop(i, None)
        self._top.pop(j, None)

    def _rescale(self) -> None:
        factor = math.exp(-self.rate * (self.seq - self.base))
        self.base = self.seq
        self.count = [c * factor for c in self.count]
        self.edges = [{b: w * factor for b, w in row.items()} for row in self.edges]
        self._top.clear()

    # -- recall -----------------------------------------------------------------------------------------------------
    def _strongest(self, i: int) -> list[tuple[float, int]]:
        """A node's HOP_FANOUT strongest partners as (conf, id). Which they are is kept until its links change (its
        count alone moving changes no order); the conf is taken with the count of now."""
        top = self._top.get(i)
        if top is None:
            top = self._top[i] = heapq.nlargest(HOP_FANOUT, ((w, b) for b, w in self.edges[i].items()))
        total = self.count[i] or 1.0
        return [(w / total, b) for w, b in top]

    def hints(self, seeds: Iterable[str], limit: int = 5) -> list[Hint]:
        """The files that most often change with `seeds` (together), strongest first; never a seed, a deleted file
        or a check."""
        seed_ids = [i for i in dict.fromkeys(self.ids.get(s) for s in seeds) if i is not None]
        if not seed_ids or limit < 1:
            return []
        direct: dict[int, float] = {}
        for q in seed_ids:
            total = self.count[q] or 1.0
            for b, w in self.edges[q].items():
                direct[b] = direct.get(b, 0.0) + w / total
        score = dict(direct)
        via: dict[int, tuple[float, int]] = {}
        for share, b in heapq.nlargest(HOP_SEEDS, ((s, b) for b, s in direct.items())):
            penalty = 1.0 + math.log1p(len(self.edges[b]))
            for conf, c in self._strongest(b):
                gain = HOP * share * conf / penalty
                score[c] = score.get(c, 0.0) + gain
                if c not in direct and gain > via.get(c, (0.0, 0))[0]:
                    via[c] = (gain, b)
        skip = set(seed_ids) | self.dead
        ranked = heapq.nlargest(limit, ((s, -c) for c, s in score.items()  # a link decayed to nothing is none
                                        if s > 0 and c not in skip and not self.paths[c].startswith(CHECK_PREFIX)))
        return [Hint(self.paths[-c], s, direct.get(-c, 0.0), self.paths[via[-c][1]] if -c in via else None)
                for s, c in ranked]
