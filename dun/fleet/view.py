"""How `dun watch` draws the loops' snapshots (rich): one panel per loop, the figures on top, the agent's output
below. Pure: the same snapshots at the same second draw the same screen, so the watch redraws only on a change."""

from __future__ import annotations

import time

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from dun.core.timefmt import clock
from dun.fleet.live import LoopSnapshot

STATUS_STYLE = {"running": "bold green", "not running": "bold red", "complete": "bold cyan", "stopped": "yellow"}
PHASE_WORDS = {"starting": "starting", "checks": "running the checks", "judging": "judging the answer",
               "decided": "between iterations", "waiting": "waiting", "stopped": "stopping"}


def _money(value: float) -> str:
    return f"${value:.2f}" if value >= 1 else f"${value:.4f}"


def figures(snap: LoopSnapshot, now: float) -> str:
    """The loop's line of figures: iteration, what it does now and for how long, boxes, cost against budget."""
    parts = [f"iteration {snap.iteration}" + (f"/{snap.max_iterations}" if snap.max_iterations else "")]
    if snap.status == "running":
        if snap.in_progress and snap.call_started:
            parts.append(f"agent {snap.agent or ''} working {clock(now - snap.call_started)}".replace("  ", " "))
        elif snap.phase:
            parts.append(PHASE_WORDS.get(snap.phase, snap.phase))
    if snap.boxes is not None:
        parts.append(f"boxes {snap.boxes[0]}/{snap.boxes[1]}")
    cost = _money(snap.cost_usd)
    parts.append(f"{cost} of {_money(snap.budget_usd)}" if snap.budget_usd else f"{cost} spent (no budget cap)")
    return " · ".join(parts)


def _decisions(snap: LoopSnapshot) -> str:
    shown = [f"#{d['iteration']} {d['action']} {d['reason']}" if d["iteration"] is not None
             else f"{d['action']} {d['reason']}" for d in snap.decisions[-3:]]
    return "decisions: " + " · ".join(shown) if shown else "decisions: none yet"


def panel(snap: LoopSnapshot, now: float, output_lines: int) -> Panel:
    status = snap.status + (f": {snap.stop_reason}" if snap.stop_reason and snap.status != "running" else "")
    title = Text.assemble((snap.label, "bold"), "  ", (status, STATUS_STYLE.get(snap.status, "")),
                          (f"  pid {snap.pid}" if snap.pid else "", "dim"), (f"  {snap.host}" if snap.host else ""))
    body = Text(figures(snap, now))
    if snap.wait_until is not None:
        body.append(f"\nwaiting ({snap.wait_reason}): resumes in {clock(snap.wait_until - now)} at "
                    f"{time.strftime('%H:%M:%S', time.localtime(snap.wait_until))}", style="yellow")
    elif snap.status == "not running":
        body.append("\nthe loop died (no process holds its lock): `dun loop` resumes the run", style="red")
    body.append("\n" + _decisions(snap), style="dim")
    lines = list(snap.output[-output_lines:]) if output_lines > 0 else []
    if lines:
        body.append("\n")
        body.append("\n".join(f"│ {line}" for line in lines), style="cyan")
    return Panel(body, title=title, title_align="left", border_style=STATUS_STYLE.get(snap.status, "dim"))


def screen(snaps: list[LoopSnapshot], now: float, height: int, interactive: bool = True) -> RenderableType:
    """Every loop, the agent's output shortened so that all fit in `height` lines."""
    header = Text.assemble(("dun watch", "bold"), f"  {len(snaps)} loop(s)  {time.strftime('%H:%M:%S')}",
                           ("  q quits" if interactive else "", "dim"))
    if not snaps:
        return Group(header, Text("no loop has run here, and none runs on this machine (`dun loop` starts one)"))
    room = max(0, (height - 1) // len(snaps) - 5)  # a panel's border, figures, wait and decisions take 5
    return Group(header, *(panel(snap, now, min(room, 12)) for snap in snaps))
