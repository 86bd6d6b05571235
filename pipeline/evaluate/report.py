"""The `score` command's report: what produced each system, then per configuration every system beside
chance and the best constant answer set, the answers' lengths, its breakdowns, then the paired gaps; as Markdown and as JSON."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from pipeline.dataset.manifest import DATASET_SPLIT
from pipeline.evaluate.baselines import ONE_TYPE
from pipeline.evaluate.compare import MCNEMAR, Comparison, compare_slice
from pipeline.evaluate.gaps import Gap, paired_gaps
from pipeline.evaluate.kind_reports import kind_markdown, kind_reports
from pipeline.evaluate.predictions import RunHeader
from pipeline.evaluate.rows import open_rows
from pipeline.evaluate.sample import Sample
from pipeline.evaluate.score import (BREAKDOWNS, Metrics, Reference, Scorer, breakdown, groups, load_systems,
                                     question_results, read_score_rows)
from pipeline.evaluate.stats import Rate
from pipeline.files import write_json
from pipeline.text.prompts import CENTRES_SETTING, IMAGE_ONLY_SETTING, RCC8_SETTING

CURVES = ("n", "m", "hops", "answer_set_size")  # plotted against, per setting
# The reference row of the best constant answer in hindsight (Reference.yn_best_constant, fr_best_constant), named
# so as not to be read as the `majority` baseline, which answers the one relation most often consistent.
BEST_CONSTANT = "best constant answer set (in hindsight)"
REFERENCE_NOTE = ("Reference rows: chance is a uniform guess's expected score; the best constant answer set is the one "
                  "answer (YN: Yes or No; FR: a set of relations) right most often on these very items, chosen after "
                  "seeing them, so no system that answers without the story can be sure to reach it; the `majority` "
                  "baseline, where scored, is a system: the more frequent YN answer and the one relation most often "
                  "consistent, counted over the configuration; blind is `roomspace audit`'s better prior-only baseline.")
MAP_BREAKDOWNS = ("setting", "view", "n", "m", "d")  # a map's hops and answer-set size are its FR item's
# a plan's setting (pick up, take out), modality (text, image), steps (its answer-set size) and depth (its hops)
PLAN_BREAKDOWNS = {"setting": "setting", "modality": "modality", "answer_set_size": "steps", "hops": "depth"}


@dataclass(frozen=True)
class Slice:
    """One set of items: every system's metrics on it and what chance and the best constant get there."""

    reference: Reference
    systems: dict[str, Metrics]


@dataclass(frozen=True)
class GroupReport:
    name: str  # a configuration, or "pooled: K configurations"
    items: int
    configs: tuple[str, ...]  # the configurations reported together (one, unless pooled)
    overall: Slice
    by: dict[str, dict]  # breakdown -> value -> Slice
    curves: dict[str, dict[str, dict]]  # axis -> setting -> value -> Slice


@dataclass(frozen=True)
class Evaluation:
    location: str
    configs: tuple[str, ...]
    seed: int
    rounds: dict[str, int]  # system -> answers per item
    groups: list[GroupReport]
    gaps: list[Gap]
    unparseable: dict[str, list[dict]]  # system -> the first unparseable answers
    runs: dict[str, RunHeader | None]  # predictions system -> what produced it (its file's header)
    sample: Sample | None  # the sample scored (`--limit`, or the one the predictions files record)
    warnings: list[str]  # where the predictions and the build do not fit (one line each)
    kinds: list = field(default_factory=list)  # the reports of kinds that have their own (pipeline.evaluate.kind_reports)
    answered_only: bool = False  # scored on the questions predictions files without a header answer
    comparisons: list[Comparison] = field(default_factory=list)  # each pair of systems, paired (pipeline.evaluate.compare)
    questions: list[dict] = field(default_factory=list)  # per question, system and round (score.question_results)


def evaluate(location: str, configs: str | None, prediction_files: list[Path], baselines: list[str], seed: int = 0,
             pool: bool = False, progress: bool = False, split: str = DATASET_SPLIT,
             sample: Sample | None = None, per_question: bool = False) -> Evaluation:
    """The scores of `prediction_files` and `baselines`; `per_question`: with every answer's record too
    (Evaluation.questions, written by `score --json`)."""
    rows = open_rows(location, split)
    chosen = rows.choose(configs)
    loaded = load_systems(rows, read_score_rows(rows, chosen, progress), prediction_files, baselines, seed, sample,
                          texts=per_question)
    score_rows, systems = loaded.rows, loaded.systems
    scorer = Scorer(score_rows, _blind(rows, chosen, seed, {row.id for row in score_rows}))

    def sliced(items) -> Slice:
        return Slice(scorer.reference(items), {name: scorer.metrics(outcomes, items) for name, outcomes in systems.items()})

    reports, comparisons = [], []
    for group in groups(score_rows, chosen, pool):
        if (loaded.sample is not None or loaded.answered_only) and not group.items.size:
            continue  # a configuration the sample, or the files without a header, do not reach
        parts = {key: breakdown(score_rows, group.items, key) for key in BREAKDOWNS}
        parts = {key: found for key, found in parts.items() if list(found) != [None]}  # modality: vision rows only
        by = {key: {value: sliced(items) for value, items in found.items()} for key, found in parts.items()}
        comparisons += compare_slice(score_rows, group.items, systems, seed, group.name)
        comparisons += [c for key, found in parts.items() for value, items in found.items()
                        for c in compare_slice(score_rows, items, systems, seed, group.name, key, value)]
        curves = {}
        for axis in CURVES:
            curves[axis] = {}
            for setting, items in breakdown(score_rows, group.items, "setting").items():
                if setting not in (RCC8_SETTING, IMAGE_ONLY_SETTING, CENTRES_SETTING):
                    curves[axis][setting] = {v: sliced(i) for v, i in breakdown(score_rows, items, axis).items()}
        reports.append(GroupReport(group.name, int(group.items.size), group.configs, sliced(group.items), by, curves))
    # The benchmark is the test split: any other is named wherever the scores are shown.
    shown = str(location) if split == DATASET_SPLIT else f"{location}, {split} split"
    return Evaluation(shown, chosen, seed, {name: o.rounds for name, o in systems.items()}, reports,
                      paired_gaps(score_rows, chosen, systems, seed),
                      {name: o.examples for name, o in systems.items() if o.examples}, loaded.runs, loaded.sample,
                      loaded.warnings, kind_reports(groups(score_rows, chosen, pool), score_rows, systems, seed),
                      loaded.answered_only, comparisons,
                      question_results(score_rows, systems) if per_question else [])


def _blind(rows, configs, seed: int, keep: set[str]) -> dict | None:
    """The audit's blind baselines' outcome per row scored (`keep`); None (the columns show "-") without
    scikit-learn."""
    from pipeline.dataset.audit import BlindUnavailable
    from pipeline.evaluate.audit import blind_correct

    try:
        return blind_correct(rows, configs, seed, keep)
    except BlindUnavailable:
        return None


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _rate(value: Rate | None) -> str:
    if value is None:
        return "-"
    sd = f" ± {100 * value.round_sd:.1f} sd" if value.round_sd is not None else ""
    return f"{100 * value.value:.1f} [{100 * value.low:.1f}, {100 * value.high:.1f}]{sd}"


def _count(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


def _table(header: list[str], lines: list[list[str]]) -> str:
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
                     + ["| " + " | ".join(line) + " |" for line in lines])


def _overall(part: Slice, shown: set[str] | None = None) -> str:
    header = ["system", "items", "no answer", "unparseable", "truncated", "YN acc [95% CI]", "FR exact [95% CI]",
              "FR F1 (items)", "FR F1 (macro, 9 labels)", "FR Jaccard", "FR single", "single consistent"]
    lines = [[name, str(m.items), _count(m.no_answer), _count(m.unparseable), _count(m.truncated),
              _rate(m.yn_accuracy), _rate(m.fr_exact), _percent(m.fr_f1_items), _percent(m.fr_f1_macro),
              _percent(m.fr_jaccard), _count(m.fr_single), _percent(m.fr_single_consistent)]
             for name, m in part.systems.items() if shown is None or name in shown]
    ref = part.reference
    lines.append(["chance (expected)", "", "", "", "", _percent(ref.yn_chance), _percent(ref.fr_chance), "", "", "", "", ""])
    lines.append([BEST_CONSTANT, "", "", "", "", _percent(ref.yn_best_constant), _percent(ref.fr_best_constant),
                  "", "", "", "", ""])
    lines.append(["blind (no story or image: roomspace audit)", "", "", "", "", _percent(ref.yn_blind),
                  _percent(ref.fr_blind), "", "", "", "", ""])
    return _table(header, lines)


def _maps(part: Slice) -> str | None:
    """Map questions (pipeline.text.maps): per system, the maps on which every fact holds, the mean share
    of facts that hold, and the maps not read; None where the slice has none."""
    lines = [[name, str(m.map_items), _rate(m.map_consistent), _percent(m.map_facts), _count(m.unparseable),
              _count(m.no_answer)] for name, m in part.systems.items() if m.map_items]
    return _table(["system", "maps", "consistent [95% CI]", "facts held", "unparseable", "no answer"],
                  lines) if lines else None


def _plans(part: Slice) -> str | None:
    """Plan questions (pipeline.text.object_tasks): per system, exact plans, the mean step content F1
    (F_c) and precondition F1 (F_p), and the share of answers not read; None where the slice has none."""
    lines = [[name, str(m.plan_items), _rate(m.plan_exact), _percent(m.plan_content), _percent(m.plan_preconditions),
              _percent(m.plan_unparseable / m.plan_items), _count(m.no_answer)]
             for name, m in part.systems.items() if m.plan_items]
    return _table(["system", "plans", "exact plan [95% CI]", "step F1 (F_c)", "precondition F1 (F_p)",
                   "unparseable %", "no answer"], lines) if lines else None


def _plan_breakdown(key: str, values: dict) -> str | None:
    lines = [[name, str(value), str(m.plan_items), _rate(m.plan_exact), _percent(m.plan_content),
              _percent(m.plan_preconditions), _percent(m.plan_unparseable / m.plan_items)]
             for value, part in values.items() for name, m in part.systems.items() if m.plan_items]
    return _table(["system", PLAN_BREAKDOWNS[key], "plans", "exact plan [95% CI]", "step F1 (F_c)",
                   "precondition F1 (F_p)", "unparseable %"], lines) if lines else None


def _map_breakdown(key: str, values: dict) -> str | None:
    lines = [[name, str(value), str(m.map_items), _rate(m.map_consistent), _percent(m.map_facts)]
             for value, part in values.items() for name, m in part.systems.items() if m.map_items]
    return _table(["system", key, "maps", "consistent [95% CI]", "facts held"], lines) if lines else None


def _above(value: Rate | None, level: float | None) -> str:
    return "-" if value is None or level is None else f"{100 * (value.value - level):+.1f}"


def _breakdown(key: str, values: dict, shown: set[str] | None = None) -> str:
    header = ["system", key, "YN acc [95% CI]", "YN chance", "YN best constant", "YN above best constant", "YN blind",
              "YN above blind", "FR exact [95% CI]", "FR chance", "FR best constant", "FR above best constant",
              "FR blind", "FR above blind"]
    lines = []
    for value, part in values.items():
        ref = part.reference
        for name, m in part.systems.items():
            if shown is not None and name not in shown:
                continue
            lines.append([name, str(value), _rate(m.yn_accuracy), _percent(ref.yn_chance), _percent(ref.yn_best_constant),
                          _above(m.yn_accuracy, ref.yn_best_constant), _percent(ref.yn_blind),
                          _above(m.yn_accuracy, ref.yn_blind), _rate(m.fr_exact), _percent(ref.fr_chance),
                          _percent(ref.fr_best_constant), _above(m.fr_exact, ref.fr_best_constant), _percent(ref.fr_blind),
                          _above(m.fr_exact, ref.fr_blind)])
    return _table(header, lines)


def _rounds(evaluation: Evaluation, part: Slice) -> str | None:
    several = {name: r for name, r in evaluation.rounds.items() if r > 1}
    if not several:
        return None
    lines = [[name, str(several[name]), _rate(m.yn_accuracy), _rate(m.fr_exact), _percent(m.yn_vote),
              _percent(m.fr_vote)] for name, m in part.systems.items() if name in several]
    return _table(["system", "rounds", "YN acc, mean [95% CI] ± sd over rounds", "FR exact, mean ± sd",
                   "YN majority vote", "FR majority vote"], lines)


def _lengths(evaluation: Evaluation, part: Slice) -> str | None:
    """Completion tokens per answer, per system that has counts, beside its truncated answers and its limit."""
    lines = []
    for name, m in part.systems.items():
        if m.tokens is None:
            continue
        run = evaluation.runs.get(name)
        cap = "-" if run is None else "none sent" if run.max_tokens is None else str(run.max_tokens)
        t = m.tokens
        lines.append([name, str(t.answers), f"{t.mean:.0f}", f"{t.median:.0f}", f"{t.p90:.0f}", f"{t.p99:.0f}",
                      str(t.max), _count(m.truncated), cap])
    if not lines:
        return None
    return _table(["system", "answers counted", "mean", "median", "90th percentile", "99th percentile", "max",
                   "truncated", "max_tokens"], lines)


def _runs(evaluation: Evaluation) -> str | None:
    """What produced each predictions file that says so (its header)."""
    lines = [[name, run.model, run.server, f"{run.temperature:g}", "none" if run.max_tokens is None else str(run.max_tokens),
              str(run.samples), run.style, "all" if run.sample is None else run.sample.describe(), run.roomspace]
             for name, run in evaluation.runs.items() if run is not None]
    if not lines:
        return None
    return _table(["system", "model", "server", "temperature", "max_tokens", "samples", "prompt style", "questions",
                   "roomspace"], lines)


def _gaps(gaps: list[Gap]) -> str:
    lines = [[g.kind, g.configs, g.system, g.measure, f"{g.first} - {g.second}", str(g.result.pairs), str(g.result.rooms),
              _percent(g.result.first), _percent(g.result.second),
              f"{100 * g.result.difference:+.1f} [{100 * g.result.low:+.1f}, {100 * g.result.high:+.1f}]"]
             for g in gaps if g.result is not None]
    return _table(["gap", "configurations", "system", "measure", "difference", "pairs", "rooms", "first", "second",
                   "difference [95% CI]"], lines)


def _comparisons(comparisons: list[Comparison]) -> str:
    lines = [[f"{c.first} - {c.second}", c.breakdown, c.value, c.measure, str(c.items), str(c.rooms),
              _percent(c.first_score), _percent(c.second_score),
              f"{100 * c.difference:+.1f} [{100 * c.low:+.1f}, {100 * c.high:+.1f}]", _p(c.p),
              c.test if c.test != MCNEMAR else f"{c.test} ({c.first_only} vs {c.second_only} discordant)"]
             for c in comparisons]
    return _table(["systems", "breakdown", "value", "measure", "items", "rooms", "first", "second",
                   "difference [95% CI]", "p", "test"], lines)


def _p(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _answering(evaluation: Evaluation, part: Slice) -> tuple[set[str], list[str]]:
    """(the systems the YN and FR tables show, the baselines of one question type they leave out): `regions`
    and `direct` (baselines.ONE_TYPE) have no answer to a YN or FR question, never a column of "no answer"."""
    left = [name for name in part.systems if name in ONE_TYPE and name not in evaluation.runs]
    return {name for name in part.systems if name not in left}, left


def markdown(evaluation: Evaluation) -> str:
    """Per configuration: the overall table, repeats, every breakdown; then the paired gaps. Rates in %."""
    parts = [f"# Scores on {evaluation.location} (rates in %, 95% intervals in brackets)"]
    if evaluation.sample is not None:
        parts.append(f"On the sample {evaluation.sample.describe()} (pipeline/evaluate/sample.py): chance, best constant, "
                     "the baselines and every interval are over its items.")
    if evaluation.answered_only:
        parts.append("On the questions the predictions files without a header answer (they name no sample; "
                     "`--limit N --seed S` names one): chance, best constant, the baselines and every interval are over "
                     "them.")
    runs = _runs(evaluation)
    if runs:
        parts += ["## Systems (as their predictions files record them)", runs]
    parts.append(REFERENCE_NOTE)
    for group in evaluation.groups:
        parts.append(f"## {group.name} ({group.items} items)")
        if group.configs != (group.name,):
            parts.append("Pooled configurations: " + ", ".join(group.configs) + ".")
        asked = any(m.yn_items or m.fr_items for m in group.overall.systems.values())
        shown, left = _answering(evaluation, group.overall)
        if asked:  # YN and FR questions (not a configuration of map questions alone)
            parts.append(_overall(group.overall, shown))
            if left:
                parts.append(f"{' and '.join(left)} answer{'s' if len(left) == 1 else ''} no YN or FR question "
                             "(`regions` draws maps only, `direct` answers plans only): left out of the YN and FR "
                             "tables, scored in the maps and plans tables.")
        maps = _maps(group.overall)
        if maps:
            parts += ["### Maps (consistent: every stated fact holds on the map; facts held: the mean share that "
                      "holds)", maps]
        plans = _plans(group.overall)
        if plans:
            parts += ["### Plans (exact: the gold steps, ordered alike; F_c and F_p: step and precondition F1 "
                      "after matching steps, docs/semantics.md section 21)", plans]
        rounds = _rounds(evaluation, group.overall)
        if rounds:
            parts += ["### Repeated answers", rounds]
        lengths = _lengths(evaluation, group.overall)
        if lengths:
            parts += ["### Answer lengths (completion tokens per answer, as the endpoint counted them)", lengths]
        for key, values in group.by.items():
            if asked:
                parts += [f"### {group.name} by {key}", _breakdown(key, values, shown)]
            mapped = _map_breakdown(key, values) if key in MAP_BREAKDOWNS else None
            if mapped:
                parts += [f"### {group.name} maps by {key}", mapped]
            planned = _plan_breakdown(key, values) if key in PLAN_BREAKDOWNS else None
            if planned:
                parts += [f"### {group.name} plans by {PLAN_BREAKDOWNS[key]}", planned]
        compared = [c for c in evaluation.comparisons if c.group == group.name]
        if compared:
            parts += [f"### {group.name}: paired comparisons of the systems (difference first - second with its 95% "
                      f"paired bootstrap interval over rooms, seed {evaluation.seed}; p: McNemar's exact test for YN "
                      "accuracy and FR exact, the bootstrap's for FR Jaccard and F1)", _comparisons(compared)]
    for report in evaluation.kinds:
        parts += kind_markdown(report)
    gaps = [g for g in evaluation.gaps if g.result is not None]
    if gaps:
        parts += [f"## Paired gaps (95% paired bootstrap over rooms, seed {evaluation.seed})", _gaps(gaps)]
    for system, examples in evaluation.unparseable.items():
        parts += [f"## Unparseable answers of {system} (the first {len(examples)}, scored as wrong)",
                  _unparseable(examples)]
    return "\n\n".join(parts) + "\n"


def _unparseable(examples: list[dict], tail: int = 160) -> str:
    """Each answer's id, what the parser found wrong, and its end (where the "Answer:" line should be)."""
    lines = []
    for example in examples:
        text = " ".join(str(example["prediction"]).split())
        end = text if len(text) <= tail else "..." + text[-tail:]
        lines.append(f"- `{example['id']}`: {example['problem']}; {len(text)} characters, ending: {end!r}")
    return "\n".join(lines)


def _json(value):
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return _json(asdict(value))
    return value


def write_report(path: Path, evaluation: Evaluation) -> None:
    write_json(path, _json(asdict(evaluation)))
