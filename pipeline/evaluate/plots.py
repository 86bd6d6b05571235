"""PNG plots of an evaluation, several systems on one figure, each line with its 95 % band.

* `{group}-{metric}-vs-{axis}.png`: YN accuracy or FR exact match against n, m, hops or
  answer-set size, one panel per setting (as in the RoomSpace paper's figures), one line per
  system, the chance and majority levels of the same items dotted; `{group}` is the configuration,
  or `pooled-K-configurations` with `--pool` (the pooled configurations are listed under the plot);
* `{group}-by-{key}.png`: YN accuracy and FR exact match per setting, view and level (BARS), a bar per
  system with its 95 % interval, beside the best constant answer of the same items;
* `by-configuration.png`: the same per configuration (each a kind of a base), where there are several;
* `gaps.png`: every paired gap of every system, with its interval.

Agg backend and no timestamp: the same scores give the same bytes.
"""

from __future__ import annotations

import math
import re
import textwrap
from pathlib import Path

from pipeline.evaluate.report import Evaluation, GroupReport
from pipeline.files import write_atomic

METRICS = (("yn_accuracy", "yn_best_constant", "YN accuracy (%)"),
           ("fr_exact", "fr_best_constant", "FR exact match (%)"))
AXIS_NAMES = {"n": "objects n", "m": "described pairs m", "hops": "hops", "answer_set_size": "answer-set size"}
BARS = ("setting", "view", "level")  # the breakdowns drawn as bars


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    return pyplot


def _save(figure, path: Path) -> Path:
    write_atomic(path, lambda target: figure.savefig(target, format="png", dpi=100, metadata={"Software": None}))
    _pyplot().close(figure)
    return path


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")


CAPTION_POINTS = 6  # font size of the list of pooled configurations under a plot


def _caption(figure, group: GroupReport) -> tuple[float, float, float, float]:
    """Lists a pool's configurations under the plot (its name only counts them), growing the figure to
    make room; returns the rectangle left for the panels."""
    if group.configs == (group.name,):
        return (0, 0, 1, 1)
    width, height = figure.get_size_inches()
    characters = max(40, int(width * 72 / (0.5 * CAPTION_POINTS)))  # a character is at most about 0.5 em wide
    lines = textwrap.wrap("Pooled: " + ", ".join(group.configs), characters)
    extra = (len(lines) + 0.5) * 1.3 * CAPTION_POINTS / 72
    figure.set_size_inches(width, height + extra)
    figure.text(0.01, 0.005, "\n".join(lines), fontsize=CAPTION_POINTS, ha="left", va="bottom")
    return (0, extra / (height + extra), 1, 1)


def curve_plot(group: GroupReport, axis: str, metric: str, majority: str, label: str, path: Path) -> Path | None:
    settings = {s: v for s, v in group.curves[axis].items() if any(getattr(m, metric) for part in v.values()
                                                                   for m in part.systems.values())}
    if not settings or all(len(values) < 2 for values in settings.values()):
        return None  # one point per line: nothing to compare (pool configurations with --pool)
    plt = _pyplot()
    columns = min(4, len(settings))
    rows = math.ceil(len(settings) / columns)
    figure, panels = plt.subplots(rows, columns, figsize=(3.6 * columns, 3.0 * rows), squeeze=False, sharey=True)
    systems = list(next(iter(next(iter(settings.values())).values())).systems)
    for panel, (setting, values) in zip(panels.flat, settings.items()):
        xs = sorted(values)
        for system in systems:
            rates = [getattr(values[x].systems[system], metric) for x in xs]
            kept = [(x, r) for x, r in zip(xs, rates) if r is not None]
            if not kept:
                continue
            (line,) = panel.plot([x for x, _ in kept], [100 * r.value for _, r in kept], marker="o", label=system)
            panel.fill_between([x for x, _ in kept], [100 * r.low for _, r in kept], [100 * r.high for _, r in kept],
                               color=line.get_color(), alpha=0.15, linewidth=0)
        levels = [(x, getattr(values[x].reference, majority)) for x in xs]
        panel.plot([x for x, v in levels if v is not None], [100 * v for _, v in levels if v is not None],
                   linestyle=":", color="grey", label="best constant answer")
        panel.set_title(setting, fontsize=9)
        panel.set_xticks(xs)
        panel.set_ylim(-2, 102)
        panel.grid(alpha=0.3)
    for panel in panels.flat[len(settings):]:
        panel.set_visible(False)
    for panel in panels[-1]:
        panel.set_xlabel(AXIS_NAMES[axis])
    for panel in panels[:, 0]:
        panel.set_ylabel(label)
    panels.flat[0].legend(fontsize=7)
    figure.suptitle(f"{group.name}: {label} against {AXIS_NAMES[axis]}")
    figure.tight_layout(rect=_caption(figure, group))
    return _save(figure, path)


def bars_plot(slices: dict, title: str, path: Path) -> Path | None:
    """{value: Slice} as bars: a panel per metric (METRICS) some system answers, a bar per value and system
    with its 95 % interval, the best constant answer of each value's items a grey tick."""
    metrics = [(metric, best, label) for metric, best, label in METRICS
               if any(getattr(m, metric) for part in slices.values() for m in part.systems.values())]
    if not metrics:
        return None
    plt = _pyplot()
    systems = list(dict.fromkeys(name for part in slices.values() for name in part.systems))
    values = list(slices)
    width = 0.8 / len(systems)
    figure, panels = plt.subplots(1, len(metrics), figsize=(max(4.0, 0.5 + 0.45 * len(values) * len(systems)) *
                                                            len(metrics), 3.4), squeeze=False)
    for panel, (metric, best, label) in zip(panels.flat, metrics):
        for k, system in enumerate(systems):
            found = [(x, getattr(slices[v].systems[system], metric)) for x, v in enumerate(values)
                     if system in slices[v].systems]
            found = [(x, r) for x, r in found if r is not None]
            if found:
                panel.bar([x - 0.4 + width * (k + 0.5) for x, _ in found], [100 * r.value for _, r in found], width,
                          yerr=[[100 * max(0.0, r.value - r.low) for _, r in found],
                                [100 * max(0.0, r.high - r.value) for _, r in found]],
                          capsize=2, label=system)
        levels = [(x, getattr(slices[v].reference, best)) for x, v in enumerate(values)]
        panel.hlines([100 * v for _, v in levels if v is not None], [x - 0.45 for x, v in levels if v is not None],
                     [x + 0.45 for x, v in levels if v is not None], colors="grey", linestyles=":",
                     label="best constant answer")
        panel.set_xticks(range(len(values)))
        panel.set_xticklabels([str(v) for v in values], fontsize=7, rotation=30 if len(values) > 4 else 0,
                              ha="right" if len(values) > 4 else "center")
        panel.set_ylim(0, 102)
        panel.set_ylabel(label, fontsize=8)
        panel.grid(alpha=0.3, axis="y")
    panels.flat[0].legend(fontsize=7)
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    return _save(figure, path)


GAP_COLUMNS = 3  # panels per row of gaps.png


def gaps_plot(evaluation: Evaluation, path: Path) -> Path | None:
    """One panel per comparison and measure it has (`gap_panels`); in each, every system's difference
    with its interval."""
    gaps = [g for g in evaluation.gaps if g.result is not None]
    if not gaps:
        return None
    plt = _pyplot()
    keys = gap_panels(gaps)
    systems = list(dict.fromkeys(g.system for g in gaps))
    columns = min(GAP_COLUMNS, len(keys))
    rows = -(-len(keys) // columns)
    figure, panels = plt.subplots(rows, columns, figsize=(4.5 * columns, 2.4 * rows + 0.6), squeeze=False)
    for panel, (kind, configs, measure) in zip(panels.flat, keys):
        found = {g.system: g for g in gaps if (g.kind, g.configs, g.measure) == (kind, configs, measure)}
        for x, system in enumerate(systems):
            if system in found:
                r = found[system].result
                # max(0, ...): with every resample alike (one or two rooms) the bounds equal the difference
                # up to rounding, and matplotlib refuses an error bar of -1e-15
                panel.errorbar([x], [100 * r.difference], yerr=[[100 * max(0.0, r.difference - r.low)],
                                                               [100 * max(0.0, r.high - r.difference)]],
                               fmt="o", capsize=3)
        panel.axhline(0, color="grey", linewidth=0.8)
        panel.set_title(f"{kind}: {measure}\n{configs}", fontsize=8)
        panel.grid(alpha=0.3, axis="y")
        panel.set_xticks(range(len(systems)))
        panel.set_xticklabels(systems, fontsize=7, rotation=30, ha="right")
        panel.set_ylabel("first - second (pp)", fontsize=8)
    for panel in panels.flat[len(keys):]:
        panel.set_visible(False)  # the last row's spare places
    figure.suptitle("Paired gaps, 95% bootstrap intervals over rooms", fontsize=10)
    figure.tight_layout(rect=(0, 0, 1, 1 - 0.5 / figure.get_figheight()))  # the title keeps its half inch
    return _save(figure, path)


def gap_panels(gaps) -> list[tuple]:
    """(kind, configurations, measure) of each panel of `gaps_plot`: only the measures a comparison has,
    so no panel is empty."""
    return list(dict.fromkeys((g.kind, g.configs, g.measure) for g in gaps))


def write_plots(evaluation: Evaluation, folder: Path) -> list[Path]:
    written = []
    for group in evaluation.groups:
        for axis in group.curves:
            for metric, majority, label in METRICS:
                path = folder / f"{_slug(group.name)}-{metric}-vs-{axis}.png"
                written.append(curve_plot(group, axis, metric, majority, label, path))
        for key in BARS:
            if key in group.by:
                written.append(bars_plot(group.by[key], f"{group.name} by {key} (95% intervals)",
                                         folder / f"{_slug(group.name)}-by-{key}.png"))
    if len(evaluation.groups) > 1:
        written.append(bars_plot({group.name: group.overall for group in evaluation.groups},
                                 "by configuration (95% intervals)", folder / "by-configuration.png"))
    written.append(gaps_plot(evaluation, folder / "gaps.png"))
    return [path for path in written if path is not None]
