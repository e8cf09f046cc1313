"""`gates`: HELIX-style gate files list the evidence (files, `path#Heading`) a phase needs before it ends."""

from __future__ import annotations

from typing import Any

from dun.config.schema import Field, Validator
from dun.config.yamlio import load_yaml_file
from dun.core.errors import ConfigError
from dun.core.globs import glob_errors, is_literal
from dun.core.textfiles import read_text
from dun.engine.checkapi import CheckContext, CheckSpec, CheckType
from dun.engine.hookspecs import hookimpl
from dun.engine.model import Item, Outcome, Status

FIELDS = {
    "files": Field("list", "Globs of gate files.", required=True, item=Field("str", "glob"), scalar_ok=True),
}
GATE_FIELDS = {
    "gate": Field("str", "Gate name; defaults to the file name.", default=None),
    "description": Field("str", "What passing the gate means.", default=""),
    "required": Field("list", "Evidence that must exist: a path, a glob, or `path#Heading`.", default=[],
                      item=Field("str", "evidence"), scalar_ok=True),
    "optional": Field("list", "Evidence whose absence only warns.", default=[], item=Field("str", "evidence"),
                      scalar_ok=True),
}


def evidence_missing(ctx: CheckContext, evidence: str) -> str | None:
    """None when the evidence exists; otherwise what is missing."""
    path, _, heading = evidence.partition("#")
    path, heading = path.strip(), heading.strip()
    if not is_literal(path):
        matches = ctx.match([path])
        if not matches:
            return f"no file matches {path}"
        if heading and not any(_has(ctx, m, heading) for m in matches):
            return f"no file matching {path} has a heading '{heading}'"
        return None
    target = ctx.root / path
    if not target.exists():
        return f"missing file {path}" + (f" (needed for heading '{heading}')" if heading else "")
    if heading:
        if not target.is_file():
            return f"{path} is not a file, cannot hold heading '{heading}'"
        text, problem = read_text(target, root=ctx.root)
        if text is None:
            return f"{path}: {problem}"
        from dun.checks.readers.markdown import has_heading

        if not has_heading(text, heading):
            return f"{path} has no heading '{heading}'"
    return None


def _has(ctx: CheckContext, rel: str, heading: str) -> bool:
    from dun.checks.readers.markdown import has_heading

    text, _ = read_text(ctx.root / rel, root=ctx.root)
    return text is not None and has_heading(text, heading)


def _load_gate(ctx: CheckContext, rel: str) -> dict[str, Any]:
    data = load_yaml_file(ctx.root / rel)
    v = Validator(rel)
    if not isinstance(data, dict):
        raise ConfigError(f"{rel}: a gate file must be a mapping")
    gate = v.check_map(data, GATE_FIELDS)
    if v.errors:
        raise ConfigError(v.errors)
    gate["gate"] = gate["gate"] or rel
    return gate


def run(spec: CheckSpec, ctx: CheckContext) -> Outcome:
    gate_files = ctx.match(spec.options["files"])
    if not gate_files:
        return Outcome(Status.SKIP, f"no gate files match {', '.join(spec.options['files'])}")
    failed: list[Item] = []
    warned: list[Item] = []
    broken: list[str] = []
    for rel in gate_files:
        try:
            gate = _load_gate(ctx, rel)
        except ConfigError as exc:
            broken.extend(exc.errors)
            continue
        for kind, sink in (("required", failed), ("optional", warned)):
            for evidence in gate[kind]:
                missing = evidence_missing(ctx, evidence)
                if missing:
                    sink.append(Item(text=f"[{gate['gate']}] {kind}: {missing}", file=rel))
    if broken:
        return Outcome(Status.ERROR, f"invalid gate file: {broken[0]}", detail="\n".join(broken),
                       items=failed + warned)
    total = len(gate_files)
    if failed:
        return Outcome(Status.FAIL, f"{len(failed)} required evidence missing across {total} gate(s)",
                       items=failed + warned, next="Create the missing evidence each gate lists, then re-run.")
    if warned:
        return Outcome(Status.WARN, f"{len(warned)} optional evidence missing across {total} gate(s)", items=warned)
    return Outcome(Status.PASS, f"{total} gate(s) satisfied")


def inputs(spec: CheckSpec, ctx: CheckContext) -> list[str]:
    """Evidence named by a literal path: it may be an ignored file, outside the work tree's fingerprint."""
    out: list[str] = []
    for rel in ctx.match(spec.options["files"]):
        try:
            gate = _load_gate(ctx, rel)
        except ConfigError:
            continue  # the check reports it
        out += [p for e in gate["required"] + gate["optional"] if is_literal(p := e.partition("#")[0].strip())]
    return out


@hookimpl
def dun_check_types() -> list[CheckType]:
    return [CheckType("gates", "Gate files whose required evidence must exist.", FIELDS, run,
                      lambda options: glob_errors(options, "files"), inputs=inputs)]
