"""The report's plots, with plotly (a dependency of dun-loop): one figure, five rows sharing the
iteration axis, so zooming on a stretch of the night zooms every row."""

from __future__ import annotations

import importlib
from typing import Any

from dun.core.errors import UsageError
from dun.report_html.series import Series

LANES = ("stop", "discrepancy", "guard denial", "agent error", "wait")
LANE_STYLE = {"stop": ("#000000", "x"), "discrepancy": ("#d62728", "diamond"), "guard denial": ("#ff7f0e", "square"),
              "agent error": ("#9467bd", "circle"), "wait": ("#1f77b4", "triangle-right")}
TITLES = ("Cost per iteration and cumulative, against the budget (USD)",
          "Mission progress: boxes done and actionable checks after each iteration",
          "Checks: failing (red) or passing (green) after each iteration", "Agent time and waits (minutes)",
          "Discrepancies, guard denials, errors, waits and stops")


def plotly() -> tuple[Any, Any]:
    """(plotly.graph_objects, plotly.subplots), or a one-line error when an install left it out."""
    try:
        return importlib.import_module("plotly.graph_objects"), importlib.import_module("plotly.subplots")
    except ImportError:
        raise UsageError("the HTML report needs plotly, which dun-loop depends on: pip install plotly (or reinstall "
                         "dun-loop)") from None


def figure(s: Series, progress: dict[str, int] | None = None, boxes_total: int | None = None) -> object:
    """The plots; `progress` is the mission's boxes done after each iteration (by label), of `boxes_total`."""
    go, subplots = plotly()
    check_rows = max(len(s.checks), 1)
    heights = [0.24, 0.16, min(0.08 * check_rows, 0.3), 0.16, 0.12]
    fig = subplots.make_subplots(rows=5, cols=1, shared_xaxes=True, vertical_spacing=0.05, row_heights=heights,
                                 subplot_titles=TITLES)
    x = s.labels
    fig.add_trace(go.Bar(x=x, y=s.cost, name="cost", marker_color="#7f7f7f", hovertext=s.hover), 1, 1)
    for n, run in enumerate(dict.fromkeys(s.run_of)):  # one line per run: a run's spending starts at 0
        at = [i for i, r in enumerate(s.run_of) if r == run]
        fig.add_trace(go.Scatter(x=[x[i] for i in at], y=[s.cumulative[i] for i in at], name="cumulative",
                                 legendgroup="cumulative", showlegend=n == 0, mode="lines+markers",
                                 line={"color": "#2ca02c"}), 1, 1)
        if any(s.budget[i] for i in at):
            fig.add_trace(go.Scatter(x=[x[i] for i in at], y=[s.budget[i] for i in at], name="budget",
                                     legendgroup="budget", showlegend=n == 0, mode="lines",
                                     line={"color": "#d62728", "dash": "dash"}), 1, 1)
        if n:
            fig.add_vline(x=at[0] - 0.5, line={"color": "#999999", "dash": "dot", "width": 1}, row="all", col=1)
    if progress:
        name = f"boxes done (of {boxes_total})" if boxes_total else "boxes done"
        fig.add_trace(go.Scatter(x=x, y=[progress.get(at) for at in x], name=name, mode="lines+markers",
                                 line={"shape": "hv", "color": "#2ca02c", "width": 3}), 2, 1)
    fig.add_trace(go.Scatter(x=x, y=s.actionable, name="actionable checks", mode="lines+markers",
                             line={"shape": "hv", "color": "#1f77b4"}, hovertext=s.hover), 2, 1)
    if s.checks:
        fig.add_trace(go.Heatmap(x=x, y=s.checks, z=s.failing, zmin=0, zmax=1, showscale=False, xgap=2, ygap=2,
                                 colorscale=[[0, "#2ca02c"], [1, "#d62728"]], name="checks",
                                 hovertemplate="%{y} after %{x}: %{z}<extra>1 failing, 0 passing</extra>"), 3, 1)
    fig.add_trace(go.Bar(x=x, y=s.duration_min, name="agent time", marker_color="#17becf"), 4, 1)
    fig.add_trace(go.Bar(x=x, y=s.wait_min, name="wait after", marker_color="#bcbd22"), 4, 1)
    for lane in LANES:
        mine = [m for m in s.markers if m.lane == lane]
        if mine:
            color, symbol = LANE_STYLE[lane]
            fig.add_trace(go.Scatter(x=[m.x for m in mine], y=[lane] * len(mine), name=lane,
                                     mode="markers+text" if lane == "stop" else "markers", textposition="middle left",
                                     text=[m.text for m in mine], hovertemplate="%{x}: %{text}<extra></extra>",
                                     marker={"color": color, "symbol": symbol, "size": 11}), 5, 1)
    fig.update_yaxes(categoryorder="array", categoryarray=list(LANES)[::-1], row=5, col=1)
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=x)
    fig.update_layout(height=900 + 22 * check_rows, barmode="stack", template="plotly_white",
                      margin={"l": 150, "r": 30, "t": 40, "b": 40}, legend={"orientation": "h", "y": -0.04},
                      hovermode="closest")
    return fig


def embed(fig: Any, div_id: str) -> str:
    """The figure's div and script, drawing with the plotly.js the page carries once."""
    return str(fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id,
                           config={"displaylogo": False, "responsive": True}))


def plotly_js() -> str:
    return str(importlib.import_module("plotly.offline").get_plotlyjs())
