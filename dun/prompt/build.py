"""`dun iterate`'s prompt: sections rendered from templates (stdlib string.Template), bounded in size by folding
the lowest-ranked items into counts. HIGH items and the instructions are never cut."""

from __future__ import annotations

import string
from dataclasses import dataclass, field

from dun.core.errors import DunError
from dun.core.resources import data_dir
from dun.core.textfiles import read_text
from dun.engine.model import CheckResult, Item, Level, folded_count
from dun.store.store import Store

ALL_PASS = "---DUN_ITERATE---\nSTATUS: ALL_PASS\nEXIT_SIGNAL: true\n---END_DUN_ITERATE---\n"
MODES = ("manual", "plan", "auto", "yolo")
SECTION_ORDER = ("mission", "handoff", "review", "git", "loop", "work", "hints", "instructions", "status_template")
TITLES = {"mission": "Mission", "handoff": "Previous iteration", "review": "Patterns dun noticed across iterations",
          "git": "Git context", "loop": "Loop state",
          "work": "Work list (pick ONE)", "hints": "Files that change together",
          "instructions": "Instructions", "status_template": "Status block"}
NOUNS = {"checkboxes": "boxes", "git-status": "paths", "coverage": "files"}
DETAIL_LINES = 15
MAX_TEMPLATE_BYTES = 256 * 1024


def template(store: Store, name: str) -> str:
    """A template from `.dun/templates/` when the repo overrides it, else dun's own."""
    override = store.templates_dir / name
    if override.exists() or override.is_symlink():
        text, problem = read_text(override, root=store.root, limit=MAX_TEMPLATE_BYTES)
        if text is None:
            raise DunError(f"{override}: cannot be read: {problem}")
        return text
    return (data_dir("templates") / name).read_text(encoding="utf-8")


@dataclass
class Entry:
    """One check in the work list and how much of it is shown."""

    result: CheckResult
    shown: int
    detail: bool

    @property
    def protected(self) -> bool:
        return self.result.level is Level.HIGH


@dataclass
class Prompt:
    sections: dict[str, str]
    entries: list[Entry]
    over_budget: bool = False
    notes: list[str] = field(default_factory=list)
    text: str = ""

    def to_dict(self) -> dict[str, object]:
        return {"schema_version": 1, "kind": "prompt", "sections": self.sections, "chars": len(self.text),
                "over_budget": self.over_budget, "prompt": self.text,
                "items": [_entry_dict(e) for e in self.entries]}


def _entry_dict(e: Entry) -> dict[str, object]:
    """The items as the prompt shows them: a check's own "... and N more" item is a count, not an item."""
    real = [i for i in e.result.items if folded_count(i) is None]
    shown = real[: e.shown]
    return {**e.result.to_dict(), "items": [i.to_dict() for i in shown],
            "items_folded": len(real) - len(shown) + _overflow(e.result.items)}


def _overflow(items: list[Item]) -> int:
    """Items a check itself already folded (its own `more_item`)."""
    return sum(folded_count(item) or 0 for item in items)


def _fold_line(result: CheckResult, hidden: list[Item], extra: int) -> str:
    noun = NOUNS.get(result.type, "items")
    files = sorted({i.file for i in hidden if i.file})
    where = ""
    if len(files) == 1:
        where = f" in {files[0]}"
    elif files:
        where = f" in {len(files)} files"
    return f"- ... and {len(hidden) + extra} more {noun}{where}"


def render_entry(n: int, e: Entry) -> str:
    r = e.result
    level = r.level.value if r.level else "-"
    lines = [f"### {n}. [{level}] {r.id} ({r.plugin}, {r.status.value})", f"Signal: {r.signal}"]
    if r.description:
        lines.append(f"Checks: {r.description}")
    if r.next:
        lines.append("Next: " + " / ".join(r.next.splitlines()))
    real_items = [i for i in r.items if folded_count(i) is None]
    if real_items:
        lines.append("Items:")
        for item in real_items[: e.shown]:
            where = item.location()
            lines.append(f"- {where + ' ' if where else ''}{item.text}")
        hidden = real_items[e.shown:]
        extra = _overflow(r.items)
        if hidden or extra:
            lines.append(_fold_line(r, hidden, extra))
    if e.detail and r.detail and not real_items:
        tail = r.detail.splitlines()[-DETAIL_LINES:]
        lines.append("Detail:")
        lines.extend("    " + d for d in tail)
    return "\n".join(lines)


def render_work(entries: list[Entry]) -> str:
    return "\n\n".join(render_entry(n, e) for n, e in enumerate(entries, 1))


def assemble(store: Store, sections: dict[str, str], iteration: int | None) -> str:
    body = "".join(f"\n## {TITLES[name]}\n\n{sections[name].strip()}\n" for name in SECTION_ORDER
                   if sections.get(name, "").strip())
    title = f" {iteration}" if iteration is not None else ""
    # what the checks, the mission or the last answer quoted goes to the model: never a key or a token
    text = string.Template(template(store, "iterate.md")).safe_substitute(iteration_title=title, sections=body)
    return store.redactor.redact(text)


def _trim_hints(store: Store, prompt: Prompt, budget: int, iteration: int | None) -> str:
    """Drop the hints' last lines until the prompt fits; the whole section once no hint is left."""
    lines = prompt.sections["hints"].rstrip("\n").split("\n")
    text = assemble(store, prompt.sections, iteration)
    dropped = 0
    while len(text) > budget and lines[-1].startswith("- "):
        lines.pop()
        dropped += 1
        prompt.sections["hints"] = "\n".join(lines) if lines[-1].startswith("- ") else ""
        text = assemble(store, prompt.sections, iteration)
    if dropped:
        prompt.notes.append(f"hints section: {dropped} line(s) left out to fit the prompt")
    return text


def build(store: Store, sections: dict[str, str], actionable: list[CheckResult], budget: int, per_check: int,
          iteration: int | None = None) -> Prompt:
    """Fit the prompt into `budget` characters, cutting from the lowest-ranked check upwards."""
    # HIGH checks show every item the check reported; the others start at `per_check`
    entries = [Entry(r, len(r.items) if r.level is Level.HIGH else min(per_check, len(r.items)), True)
               for r in actionable]
    prompt = Prompt(sections=dict(sections), entries=entries)

    def render() -> str:
        prompt.sections["work"] = render_work(entries)
        return assemble(store, prompt.sections, iteration)

    text = render()
    if len(text) > budget and prompt.sections.get("hints"):  # advice goes first, before any work item
        text = _trim_hints(store, prompt, budget, iteration)
    for e in reversed(entries):  # lowest rank first: drop the detail, then the items
        if len(text) <= budget:
            break
        if e.protected:
            continue
        e.detail = False
        text = render()
        if len(text) > budget:
            e.shown = 0
            text = render()
    for name, floor in (("git", 0), ("mission", 600)):  # then the context sections
        if len(text) <= budget or not prompt.sections.get(name):
            continue
        excess = len(text) - budget
        kept = max(floor, len(prompt.sections[name]) - excess - 80)
        if kept < len(prompt.sections[name]):
            prompt.sections[name] = prompt.sections[name][:kept].rstrip() + (
                "\n\n(truncated to fit the prompt; read the file itself)" if kept else "")
            prompt.notes.append(f"{name} section truncated to {kept} characters")
            text = assemble(store, prompt.sections, iteration)
    prompt.over_budget = len(text) > budget
    if prompt.over_budget:
        prompt.notes.append(f"prompt is {len(text)} characters, over max_prompt_chars {budget}: HIGH items and the "
                            "instructions are never cut")
    prompt.text = text
    return prompt
