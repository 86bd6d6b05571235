"""The `roomspace` command: one subcommand per job, each a thin call into its stage module."""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
from pathlib import Path

from pipeline.errors import RoomspaceError, Terminated
from pipeline.text.kinds import BASE, KINDS, added_kinds


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def endpoint_url(text: str) -> str:
    """--base-url: an http(s) address with a host, refused here rather than by urllib mid-run."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 (raises ValueError on a port that is not a number from 0 to 65535)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError("expected a URL with scheme http or https and a host, e.g. "
                                         f"http://localhost:8000/v1; got {text!r}")
    return text


def number_in(text: str, fits, expected: str) -> float:
    """`text` as a number that `fits`; a word, nan or one out of range is refused, saying what to give."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not fits(value):
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
    return value


def positive_seconds(text: str) -> float:
    return number_in(text, lambda value: 0 < value < math.inf, "a number of seconds above 0")


def temperature(text: str) -> float:
    return number_in(text, lambda value: 0 <= value < math.inf, "a finite number at least 0")


def nonempty_name(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a non-empty name, got {text!r}")
    return text


# pyproject.toml's extras by the distributions they install (tests/test_light_install.py keeps them equal), and the
# modules a distribution installs where they are not its name: a command that imports one of them on an install
# without its extra says in one line which extra to install
EXTRAS = {
    "build": ("procthor", "ai2thor", "moviepy", "attrs", "networkx", "pandas", "shapely", "jsonschema",
              "jsonschema-rs", "datasets", "dask", "pillow", "scikit-learn"),
    "harness": ("lm_eval", "inspect_ai", "openai"),
    "serve": ("flask", "jinja2", "markdown-it-py"),
}
MODULES = {"attrs": ("attr", "attrs"), "dask": ("dask", "distributed"), "pillow": ("PIL",),
           "scikit-learn": ("sklearn",), "markdown-it-py": ("markdown_it",), "jsonschema-rs": ("jsonschema_rs",)}


def extra_of(module: str) -> str | None:
    """The extra that installs top-level `module` (or its distribution's metadata), None for any other."""
    for extra, distributions in EXTRAS.items():
        for distribution in distributions:
            if module in MODULES.get(distribution, (distribution,)):
                return extra
    return None


def machine_cores() -> int:
    """The cores this process may use (all of them where the OS cannot say)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def add_scenes(commands) -> None:
    scenes = commands.add_parser("scenes", help="sample seeded ProcTHOR single-room houses")
    scenes.add_argument("--count", type=positive_int, required=True, help="number of houses")
    scenes.add_argument("--seed", type=int, default=0, help="global seed S; house k depends on (S, k) only")
    scenes.add_argument("--out", type=Path, default=Path("scenes"), help="folder for the scene files")
    scenes.add_argument("--controller", choices=["offline", "ai2thor"], default="offline",
                        help="offline: pre-physics stages only (default); ai2thor: a real Unity build")
    scenes.add_argument("--source", choices=["procthor", "procthor-10k"], default="procthor",
                        help="procthor: sample new houses (default); procthor-10k: the published set, via prior")
    scenes.add_argument("--force", action="store_true", help="resample scenes already on disk")
    scenes.add_argument("--small-objects", action="store_true",
                        help="record small objects on and in the furniture of every scene (placed offline from "
                             "ProcTHOR's receptacle table; a kept scene without them gets them, its house unchanged)")
    scenes.add_argument("--quiet", action="store_true", help="no progress bar")
    add_executor_options(scenes)
    scenes.set_defaults(run=cmd_scenes)


def cmd_scenes(args: argparse.Namespace) -> None:
    from pipeline.scene.scene_folder import sample_scenes

    sampled = sample_scenes(
        count=args.count,
        seed=args.seed,
        out=args.out,
        controller=args.controller,
        source=args.source,
        force=args.force,
        progress=not args.quiet,
        workers=args.workers,
        scheduler=dask_scheduler(args),
        small_objects=args.small_objects,
    )
    print(f"{args.out}: {args.count} scenes of seed {args.seed}: {sampled} sampled now, "
          f"{args.count - sampled} already there and kept")


def add_build(commands) -> None:
    build = commands.add_parser("build", help="build a RoomSpace dataset: scenes, items, Parquet shards, card")
    build.add_argument("--rooms", type=positive_int, required=True, help="number of rooms (100, 1000, 10000, ...)")
    build.add_argument("--seed", type=int, default=0, help="global seed; room k depends on (seed, k) only")
    build.add_argument("--scenes", type=Path, default=Path("scenes"), help="scene folder, reused and filled")
    build.add_argument("--out", type=Path, required=True, help="output folder; its name is the dataset's name")
    build.add_argument("--configs", default="default",
                       help="comma-separated configurations (n5_m4_d144, n5_m4_d144_balanced, n8_m20_d144_hard), "
                            "'default' (n5_m4_d81,n5_m4_d144), 'balanced' or 'hard' (their balanced and hard "
                            "counterparts) or 'sweep' (n 3-7, every m, d 9 and 12)")
    for kind in added_kinds():
        build.add_argument(kind.option, metavar="CONFIGS", dest=kind.name, help=kind_option_help(kind))
    build.add_argument("--balanced", action="store_true",
                       help="also build the balanced counterpart (<config>_balanced) of every configuration of every "
                            "kind asked for that has one (base, vision, twin, agent): the same rooms, questions drawn "
                            "so that no question's answer shows without its story or image")
    build.add_argument("--hard", action="store_true",
                       help="also build the hard configuration (n8_m20_d<d*d>_hard) of every grid of every kind "
                            f"asked for that has one ({', '.join(kind.name for kind in KINDS.values() if kind.hard)}): "
                            "larger stories, questions drawn as balanced ones among the pairs only search answers "
                            "(docs/semantics.md section 22)")
    build.add_argument("--train-rooms", type=positive_int, default=0, metavar="N",
                       help="also build a train split of N rooms, other houses than the test rooms (default: none)")
    build.add_argument("--validation-rooms", type=positive_int, default=0, metavar="M",
                       help="also build a validation split of M rooms, other houses than the others (default: none)")
    build.add_argument("--shard-rooms", type=positive_int, default=100,
                       help="rooms per Parquet shard, the unit of resumption (default: 100)")
    add_renderer_options(build, "what draws the images of the vision kinds: offline (the default) or blender (the same "
                                "views and labels rendered by Blender; `make blender` installs it); recorded in the "
                                "build's identity and card")
    add_executor_options(build)
    build.add_argument("--quiet", action="store_true", help="no progress bar")
    build.set_defaults(run=cmd_build)


def kind_option_help(kind) -> str:
    """The help of a kind's build option, and of the kinds made from it and others (pipeline.text.kinds)."""
    made = [(made, [KINDS[other].option for other in made.made_from[1:]]) for made in KINDS.values()
            if made.made_from[:1] == (kind.name,)]
    return (f"base configurations that also get {kind.config_name('<base>')}: {kind.summary}, "
            f"e.g. n5_m4_d144" + "".join(f"; one also in {' and '.join(options)} gets {other.config_name('<base>')} "
                                         f"too: {other.summary}" for other, options in made))


def cmd_build(args: argparse.Namespace) -> None:
    from pipeline.dataset.build import BuildPlan, build
    from pipeline.text.configs import parse_configs

    def asked(text: str, kind) -> tuple:
        configs = parse_configs(text)
        balanced = tuple(c.as_balanced() for c in configs) if args.balanced and kind.balanced else ()
        hard = tuple(c.as_hard() for c in configs) if args.hard and kind.hard else ()
        return tuple(dict.fromkeys(configs + balanced + hard))

    added = {kind.name: asked(getattr(args, kind.name), kind) for kind in added_kinds() if getattr(args, kind.name)}
    plan = BuildPlan.asked(args.out.name, args.seed, args.rooms, asked(args.configs, BASE), added,
                           shard_rooms=args.shard_rooms, train_rooms=args.train_rooms,
                           validation_rooms=args.validation_rooms, renderer=asked_renderer(args, build=True))
    report = build(plan, scenes_dir=args.scenes, out=args.out, workers=args.workers, progress=not args.quiet,
                   scheduler=dask_scheduler(args))
    rows = ", ".join(f"{name}: {count}" for name, count in report.rows.items())
    print(f"{args.out}: {sum(report.rows.values())} rows ({rows}); {report.rooms_built} rooms computed now, "
          f"scenes {report.scene_seconds:.1f} s and items {report.item_seconds:.1f} s of worker time, "
          f"{report.wall_seconds:.1f} s wall")
    if report.rooms_built:
        made = {family: report.family_seconds[family] for family in ("paper", "balanced", "hard")
                if family in report.family_seconds}
        tables = report.item_seconds - sum(made.values())
        print(f"worker seconds by part: scenes {report.scene_seconds:.1f}, "
              + "".join(f"{family} {seconds:.1f}, " for family, seconds in made.items())
              + f"tables {tables:.1f}; main process: shards written {report.write_seconds:.1f} s, "
              f"card {report.card_seconds:.1f} s")
    for split, counts in report.training_rows.items():
        print(f"{split} split: {sum(counts.values())} rows ({', '.join(f'{n}: {c}' for n, c in counts.items())})")
    if report.houses:
        houses = ", ".join(f"{count} {split}" for split, count in report.houses["houses"].items())
        print(f"splits disjoint: houses compared by the sha256 of their JSON: {houses}; "
              f"{report.houses['distinct']} distinct, none shared between splits")


def dask_scheduler(args: argparse.Namespace) -> str | None:
    if args.executor == "dask" and not args.scheduler:
        raise RoomspaceError("--executor dask needs --scheduler ADDRESS (e.g. tcp://10.0.0.5:8786)")
    if args.executor == "local" and args.scheduler:
        raise RoomspaceError("--scheduler goes with --executor dask")
    return args.scheduler


def add_executor_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workers", type=positive_int, default=machine_cores(),
                        help="local worker processes (default: the machine's cores); the output does not depend on it")
    parser.add_argument("--executor", choices=["local", "dask"], default="local",
                        help="local: worker processes on this machine (default); dask: a Dask cluster")
    parser.add_argument("--scheduler", help="the Dask scheduler's address, with --executor dask")


def add_validate(commands) -> None:
    validate = commands.add_parser("validate", help="re-check a built folder: checksums, listing, card, rows "
                                                    "re-derived from their scenes (each scene file's checksum "
                                                    "checked), smaller builds beside it nested or not")
    validate.add_argument("out", type=Path, help="a folder written by `roomspace build`")
    validate.add_argument("--scenes", type=Path, default=Path("scenes"),
                          help="scene folder, only read (default: scenes); missing scenes are sampled into a "
                               "temporary folder")
    validate.add_argument("--sample", type=positive_int,
                          help="rooms whose rows are re-derived (default: all of a build of up to 1000 rooms, "
                               "else 1000)")
    validate.add_argument("--seed", type=int, default=0, help="seed of the sample of rooms (default: 0)")
    validate.add_argument("--quiet", action="store_true", help="no progress bar")
    validate.set_defaults(run=cmd_validate)


def cmd_validate(args: argparse.Namespace) -> None:
    from pipeline.dataset.validate import validate

    report = validate(args.out, scenes=args.scenes, sample=args.sample, seed=args.seed, progress=not args.quiet)
    nested = ", ".join(report.nested) or "none"
    others = (f"; not nested, other datasets beside it (smaller builds of its seed whose rows differ from its first "
              f"rooms; they do not make it invalid): {', '.join(report.not_nested)}" if report.not_nested else "")
    print(f"{args.out}: valid: {report.shards} shards ({report.files} files), {report.rows} rows; "
          f"{report.rederived} of {report.rooms} rooms re-derived from their scenes, equal field by field; "
          f"smaller builds nested in it: {nested}{others}")


def add_push(commands) -> None:
    push = commands.add_parser("push", help="publish a built folder to the Hugging Face Hub")
    push.add_argument("out", type=Path, help="a folder written by `roomspace build`")
    push.add_argument("--repo", required=True, help="dataset repository, OWNER/NAME")
    push.add_argument("--private", action="store_true", help="create the repository private")
    push.set_defaults(run=cmd_push)


def cmd_push(args: argparse.Namespace) -> None:
    from pipeline.dataset.hub import push

    print(push(args.out, args.repo, args.private))


def add_schemas(commands) -> None:
    schemas = commands.add_parser("schemas", help="write the JSON Schemas of the scene file and of every configuration "
                                                  "kind's rows (derived from the records)")
    schemas.add_argument("--out", type=Path, default=Path("schemas"),
                         help="folder (default: schemas): scene.schema.json and rows/<kind>.schema.json")
    schemas.set_defaults(run=cmd_schemas)


def schema_files() -> dict[str, dict]:
    """Every schema `roomspace schemas` writes, by its path in the folder: the scene file's, and a row's
    of every configuration kind (pipeline.text.kinds)."""
    from pipeline.dataset.rows import row_schema
    from pipeline.scene.scene_file import SCENE_FILE_SCHEMA
    from pipeline.text.kinds import KINDS

    return {"scene.schema.json": SCENE_FILE_SCHEMA,
            **{f"rows/{kind.name}.schema.json": row_schema(kind) for kind in KINDS.values()}}


def cmd_schemas(args: argparse.Namespace) -> None:
    import json

    schemas = schema_files()
    for name, schema in schemas.items():
        path = args.out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(schema, indent=2) + "\n", encoding="utf-8")
        print(path)
    for stale in sorted((args.out / "rows").glob("*.schema.json")):  # a kind no longer declared
        if stale.relative_to(args.out).as_posix() not in schemas:
            stale.unlink()
            print(f"removed {stale}")


LOCATION = "a folder written by `roomspace build`, a Hub snapshot of one (README.md and data/), or OWNER/NAME"
ANY_CONFIGS = "comma-separated configurations, any kind (default: all of them)"


def add_source(command: argparse.ArgumentParser, help: str = LOCATION) -> None:
    """The positional naming the build a command reads: `args.source`."""
    command.add_argument("source", metavar="SOURCE", help=help)


def add_split(command: argparse.ArgumentParser, default: str | None = None) -> None:
    from pipeline.dataset.manifest import DATASET_SPLIT, SPLITS

    default = default or DATASET_SPLIT
    command.add_argument("--split", choices=SPLITS, default=default,
                         help=f"the split to read (default: {default}); test is the benchmark")


def non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {value}")
    return value


SAMPLE_HELP = ("ask only a fixed stratified sample of N questions of the chosen configurations: every configuration, "
               "setting, view, question type and modality in proportion, the same ids for the same --seed and N on "
               "any build of the same rooms (pipeline/evaluate/sample.py)")


def add_sample(command: argparse.ArgumentParser, seed: bool = True, limit_help: str = SAMPLE_HELP) -> None:
    """--limit N [--seed S]: the sample (pipeline.evaluate.sample) a command reads."""
    command.add_argument("--limit", type=positive_int, metavar="N", help=limit_help)
    if seed:
        command.add_argument("--seed", type=int, default=0, help="seed of the --limit sample (default: 0)")


def chosen_sample(rows, configs, args: argparse.Namespace):
    """(Sample, its ids) of --limit and --seed, or (None, None) without --limit."""
    from pipeline.evaluate.sample import Sample, sample_ids

    if args.limit is None:
        return None, None
    sample = Sample(args.limit, args.seed)
    return sample, sample_ids(rows, configs, sample)


def add_prompts(commands) -> None:
    from pipeline.text.prompts import DEFAULT_STYLE, STYLES

    prompts = commands.add_parser("prompts", help="print one ready prompt per item as JSON lines (id, prompt, messages)")
    add_source(prompts)
    prompts.add_argument("--config", help=ANY_CONFIGS)
    prompts.add_argument("--style", choices=STYLES, default=DEFAULT_STYLE,
                         help="self-contained: the row's prompt, stating every definition its answer depends on "
                              "(default); paper: story, question and options only, as in the published evaluation")
    add_sample(prompts)
    add_split(prompts)
    prompts.set_defaults(run=cmd_prompts)


def cmd_prompts(args: argparse.Namespace) -> None:
    from pipeline.evaluate.prompts import make_prompts, prompt_columns
    from pipeline.evaluate.rows import open_rows

    rows = open_rows(args.source, args.split)
    configs = rows.choose(args.config)
    _, chosen = chosen_sample(rows, configs, args)
    print_lines(prompt.record() for prompt in make_prompts(rows.rows(configs, prompt_columns(args.style), chosen),
                                                            args.style))


def add_export(commands) -> None:
    from pipeline.evaluate.export import FORMATS

    export = commands.add_parser("export", help="print a split as JSON lines for training: chats for fine-tuning "
                                                "({\"messages\": [prompt, reasoning target]}), or prompts "
                                                "with their scoring fields for the RL reward")
    add_source(export)
    export.add_argument("--format", choices=FORMATS, default=FORMATS[0],
                        help="chat: {\"messages\": [user prompt, assistant target]} per row, images as content parts; "
                             "prompt: {\"prompt\": [user prompt], <scoring fields>} per row, the prompt-only dataset "
                             "of TRL's GRPO trainer that pipeline.evaluate.reward.roomspace_reward scores")
    add_split(export, "train")
    export.add_argument("--config", help=ANY_CONFIGS)
    export.add_argument("--maps", action="store_true",
                        help="start each target with the row's cognitive map (the d x d grid with the story's objects)")
    export.add_argument("--balance", type=int, metavar="SEED",
                        help="keep a seeded draw of the rows in which, per configuration and setting, each FR "
                             "answer-set size and each YN answer has at most the median one's count (training "
                             "splits only)")
    export.set_defaults(run=cmd_export)


def cmd_export(args: argparse.Namespace) -> None:
    from pipeline.evaluate.export import export_chat
    from pipeline.evaluate.rows import open_rows

    rows = open_rows(args.source, args.split)
    print_lines(export_chat(rows, rows.choose(args.config), maps=args.maps, balance=args.balance, form=args.format))


def print_lines(records) -> None:
    """JSON lines on stdout, one record each."""
    import json

    try:
        for record in records:
            print(json.dumps(record, ensure_ascii=False))
        sys.stdout.flush()
    except BrokenPipeError:  # the reader stopped early (`| head`): not an error; silence the exit-time flush
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def add_score(commands) -> None:
    from pipeline.evaluate.baselines import BASELINES

    score = commands.add_parser(
        "score", help="score predictions or baselines by consistency with the stories",
        description="Score predictions files and baselines per configuration: every system beside chance and the "
                    "best constant answer set, with breakdowns (setting, view, form, n, m, d, hops, answer-set size, level, "
                    "room_type, tightness, path_decides, layout_decides, ...), the paired gaps between conditions, "
                    "and with two or more systems each pair compared on the same questions, per configuration and "
                    "breakdown value: the difference with its 95% paired bootstrap interval over rooms and p "
                    "(McNemar's exact test for YN accuracy and FR exact, the bootstrap for FR Jaccard and F1).")
    add_source(score)
    score.add_argument("--predictions", type=Path, action="append", default=[],
                       help='JSON lines {"id": ..., "prediction": "free text"[, "sample": k, "truncated": true]}; '
                            "repeat for several systems. A file run-model wrote is scored on the questions its header "
                            "says it asked, those it left unanswered as no answer; a file without a header (an "
                            "inspect export, a hand-made file) on the questions it answers, said on stderr, unless "
                            "--limit names a sample")
    score.add_argument("--name", type=nonempty_name, action="append", default=[],
                       help="the system's name in the report, once per --predictions in the same order "
                            "(default: the model its file records, else the file's name without its extension)")
    score.add_argument("--baseline", action="append", default=[], choices=BASELINES,
                       help="score a baseline; repeatable. majority: the more frequent YN answer and the one relation "
                            "most often consistent (not the report's 'best constant answer set (in hindsight)' row); "
                            "regions answers map questions only and direct plan questions only: the YN and FR tables "
                            "leave them out, saying so")
    score.add_argument("--config", help=ANY_CONFIGS)
    score.add_argument("--pool", action="store_true",
                       help="report the chosen configurations as one pool (default: each on its own)")
    score.add_argument("--seed", type=int, default=0,
                       help="seed of the random baseline and the bootstrap intervals, and of the --limit sample")
    add_sample(score, seed=False, limit_help="score only the sample of N questions that `run-model --limit N --seed S` "
                                             "asks (default: the sample the predictions files record, else every "
                                             "question)")
    score.add_argument("--json", type=Path,
                       help="also write the scores to this JSON file, with `questions`: a record per question, system "
                            "and round (id, config, room_id, question_type, setting, view, system, sample, the answer's "
                            "text, the parsed answer, status, correct, jaccard, f1) to join with anything")
    score.add_argument("--plots", type=Path,
                       help="also write PNG plots (accuracy against n, m, hops and answer-set size; the paired gaps)")
    score.add_argument("--html", type=Path, metavar="F",
                       help="also write the report as one HTML file: its tables and every plot of --plots inline")
    score.add_argument("--quiet", action="store_true", help="no progress bar, and no line per plot written")
    add_split(score)
    score.set_defaults(run=cmd_score)


def cmd_score(args: argparse.Namespace) -> None:
    from pipeline.evaluate.report import evaluate, markdown, write_report
    from pipeline.evaluate.score import name_systems

    from pipeline.evaluate.sample import Sample

    if args.html:
        from pipeline.serve.html_report import write_html  # the serve extra: missing, said before any scoring
    predictions = name_systems(args.predictions, args.name)  # before a Hub download, not after
    sample = None if args.limit is None else Sample(args.limit, args.seed)
    evaluation = evaluate(args.source, args.config, predictions, args.baseline, args.seed, args.pool,
                          progress=not args.quiet, split=args.split, sample=sample, per_question=args.json is not None)
    for warning in evaluation.warnings:
        print(f"roomspace score: warning: {warning}", file=sys.stderr)
    print(markdown(evaluation), end="")
    if args.json:
        write_report(args.json, evaluation)
    if args.html:
        write_html(args.html, evaluation)
    if args.plots:
        from pipeline.evaluate.plots import write_plots

        for path in write_plots(evaluation, args.plots):
            if not args.quiet:
                print(f"plot: {path}", file=sys.stderr)


def add_audit(commands) -> None:
    audit = commands.add_parser("audit", help="how much a model answers without the story or image: prior-only "
                                              "baselines per configuration, setting and question type")
    add_source(audit)
    audit.add_argument("--config", help=ANY_CONFIGS)
    audit.add_argument("--seed", type=int, default=0, help="seed of the halves of the rooms (without a train split)")
    audit.add_argument("--max-yn", type=percent, metavar="P",
                       help="exit non-zero when a cell's blind YN accuracy passes P percent")
    audit.add_argument("--max-fr", type=percent, metavar="P",
                       help="exit non-zero when a cell's blind FR exact accuracy passes P percent")
    audit.add_argument("--min-questions", type=positive_int, default=100,
                       help="cells with fewer questions are printed but not held to the limits (default: 100)")
    add_split(audit)
    audit.set_defaults(run=cmd_audit)


def percent(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a percentage, got {text!r}") from None
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"must be between 0 and 100, got {text}")
    return value / 100


def cmd_audit(args: argparse.Namespace) -> None:
    from pipeline.dataset.audit import audit_table, map_audit_table, over_limits
    from pipeline.evaluate.audit import audit_source

    cells, map_cells, fitted_on, notes = audit_source(args.source, args.config, args.split, args.seed)
    print(f"blind baselines fitted on {fitted_on}; accuracies in percent\n")
    if cells or not notes:
        print(audit_table(cells))
    for note in notes:
        print(f"\n{note}" if cells else note)
    if map_cells:
        print("\nmaps: the blind map (each object in its type's most frequent cell) and uniformly drawn cells, "
              "judged by the stories' facts; no limit applies\n")
        print(map_audit_table(map_cells))
    over = over_limits(cells, args.max_yn, args.max_fr, args.min_questions)
    if over:
        raise RoomspaceError(f"{len(over)} cells pass the limits, the highest {max(over, key=lambda c: c.blind).describe()}")


def add_run_model(commands) -> None:
    from pipeline.evaluate.model_runner import DEFAULT_MAX_TOKENS
    from pipeline.text.prompts import DEFAULT_STYLE, STYLES

    run_model = commands.add_parser("run-model", help="ask an OpenAI-compatible chat endpoint every prompt")
    add_source(run_model, "a built folder, a Hub snapshot folder, or a Hub dataset id OWNER/NAME")
    run_model.add_argument("--base-url", type=endpoint_url, required=True,
                           help="the endpoint: http://host:port, .../v1 or .../v1/chat/completions")
    run_model.add_argument("--model", type=nonempty_name, required=True, help="model name sent with each request")
    run_model.add_argument("--out", dest="predictions_out", type=Path, required=True,
                           help="predictions file (JSON lines) for `roomspace score`")
    run_model.add_argument("--config", help="comma-separated configurations, any kind (twin_*, vision_*, agent_*, "
                                            "vision_agent_*; default: every one there); vision rows are sent with "
                                            "their image")
    run_model.add_argument("--style", choices=STYLES, default=DEFAULT_STYLE,
                           help=f"prompt style (default: {DEFAULT_STYLE}, the rows' own prompt column)")
    run_model.add_argument("--samples", type=positive_int, default=1,
                           help="answers per prompt (default: 1); more need --temperature above 0, and each "
                                "predictions line then carries its \"sample\" number")
    run_model.add_argument("--concurrency", type=positive_int, default=4, help="requests in flight (default: 4)")
    run_model.add_argument("--api-key-env", help="environment variable holding the API key (sent as a Bearer token)")
    run_model.add_argument("--timeout", type=positive_seconds, default=120.0,
                           help="seconds per request (default: 120); Ctrl-C does not wait for it: the requests in "
                                "flight are closed, the answers that came are kept, and the same command resumes")
    run_model.add_argument("--retries", type=positive_int, default=5, help="requests per prompt at most (default: 5)")
    run_model.add_argument("--temperature", type=temperature, default=0.0, help="sampling temperature (default: 0)")
    run_model.add_argument("--max-tokens", type=non_negative_int, default=DEFAULT_MAX_TOKENS,
                           help=f"answer length limit sent with each request (default: {DEFAULT_MAX_TOKENS}, the "
                                "lm-evaluation-harness tasks' max_gen_toks; 0 sends none, leaving the endpoint's own); "
                                "answers cut by it are marked truncated, and `score` shows the answers' lengths")
    add_sample(run_model)
    run_model.add_argument("--cache", type=Path, help="answer cache (default: the --out file + .cache.jsonl)")
    run_model.add_argument("--quiet", action="store_true", help="no progress bar")
    add_split(run_model)
    run_model.set_defaults(run=cmd_run_model)


def cmd_run_model(args: argparse.Namespace, watch=None) -> None:
    """`watch`: for a caller that runs the server itself (bench/eval_tiny.py), raises when it has died."""
    from pipeline.evaluate.model_runner import Endpoint, Retry, check_samples, run_model
    from pipeline.evaluate.predictions import RunHeader, templates_sha256
    from pipeline.evaluate.prompts import make_prompts, prompt_columns
    from pipeline.evaluate.rows import open_rows

    api_key = None
    if args.api_key_env:
        api_key = os.environ.get(args.api_key_env)
        if not api_key:
            raise RoomspaceError(f"environment variable {args.api_key_env} (--api-key-env) is not set")
    endpoint = Endpoint(Endpoint.chat_url(args.base_url), args.model, api_key, args.timeout, args.temperature,
                        args.max_tokens or None)
    check_samples(args.samples, args.temperature)  # before a Hub download, not after
    cache = args.cache or args.predictions_out.with_name(args.predictions_out.name + ".cache.jsonl")
    rows = open_rows(args.source, args.split)
    configs = rows.choose(args.config)
    data = rows.data_sha256(configs)  # every file read is checked against the build's manifest, before any request
    sample, chosen = chosen_sample(rows, configs, args)
    header = RunHeader(endpoint.model, endpoint.url, endpoint.temperature, endpoint.max_tokens, args.samples,
                       args.style, templates_sha256(), args.source, args.split, configs, rows.manifest_sha256, data,
                       sample)
    prompts = make_prompts(rows.rows(configs, prompt_columns(args.style), chosen), args.style)
    report = run_model(prompts, endpoint, args.predictions_out, cache, args.concurrency, Retry(args.retries),
                       progress=not args.quiet, samples=args.samples,
                       count=rows.count(configs) if chosen is None else len(chosen), header=header, watch=watch)
    samples = f" x {report.samples} samples" if report.samples > 1 else ""
    drawn = "" if sample is None else f" (the sample {sample.describe()})"
    limit = "no max_tokens sent" if endpoint.max_tokens is None else f"max_tokens {endpoint.max_tokens}"
    print(f"{args.predictions_out}: {report.prompts} prompts{drawn}{samples} ({report.images} with an image), "
          f"{report.cached} answered from {cache}, {report.asked} asked now"
          f"{f', {report.shared} the answers of identical prompts asked now' if report.shared else ''}, "
          f"{report.failed} failed, "
          f"{report.truncated} truncated at the length limit ({limit}), "
          f"{report.over_context} longer than the model's context (null predictions: no answer)")
    if report.failed:
        raise RoomspaceError(f"{report.failed} of {report.prompts * report.samples} answers never came "
                             f"(first: {report.first_error}); they are written as null predictions; "
                             "re-run the same command to retry only them")


def add_render(commands) -> None:
    render = commands.add_parser("render", help="draw each room top-down and from the south door (PNG, for VLM items)")
    render.add_argument("--scenes", type=Path, default=Path("scenes"), help="scene folder (default: scenes)")
    render.add_argument("--out", type=Path, default=Path("renders"), help="folder for <room_id>/top_down.png and south_door.png")
    render.add_argument("--rooms", type=positive_int,
                        help="rooms 0..N-1 of --seed, sampled into --scenes when missing (default: every scene of --seed there)")
    render.add_argument("--seed", type=int, default=0, help="global seed of the scenes (default: 0)")
    render.add_argument("--grid", type=int, help="overlay the d x d grid and the nine regions on the top-down image (d: 9 or 12)")
    add_renderer_options(render, "offline: drawn from the scene records, no GPU (default); blender: the same views "
                                 "rendered by Blender (`make blender` installs it); ai2thor: photoreal, needs the Unity build")
    render.add_argument("--force", action="store_true", help="redraw images already made")
    render.add_argument("--quiet", action="store_true", help="no progress bar")
    render.set_defaults(run=cmd_render)


def add_renderer_options(parser, renderers: str) -> None:
    parser.add_argument("--renderer", default="offline", help=renderers)
    parser.add_argument("--blender-engine", metavar="ENGINE",
                        help="--renderer blender's engine: workbench (the default), cycles or eevee (pipeline/data/blender.json)")
    parser.add_argument("--blender-samples", type=positive_int, metavar="N",
                        help="--renderer blender's samples per pixel for cycles and eevee (default 16)")


def asked_renderer(args: argparse.Namespace, build: bool = False):
    from pipeline.render.job import BUILD_RENDERERS, RENDERERS, Renderer

    return Renderer.asked(args.renderer, args.blender_engine, args.blender_samples,
                          BUILD_RENDERERS if build else RENDERERS)


def add_serve(commands) -> None:
    serve = commands.add_parser(
        "serve", help="browse a build in a web browser, answer its questions as a person, see the scores",
        description="A local web application over a build or a Hub snapshot: browse its questions (filtered by "
                    "kind, setting, view, question type and level; each with its story, picture, options, exact "
                    "answer set, reasoning path, witness grid and the blind baselines' guesses), answer the seeded "
                    "sample `run-model --limit N --seed S` asks as a person (written as they come to "
                    "PREDICTIONS/human-NAME.jsonl, which `score` reads as the system human:NAME; the same name "
                    "resumes), and see `score`'s report of the predictions files there beside the baselines.")
    add_source(serve)
    serve.add_argument("--port", type=non_negative_int, default=8046, help="port (default: 8046; 0: any free one)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to bind (default: 127.0.0.1, this machine only); another exposes the build and "
                            "the answer pages to whoever reaches it")
    serve.add_argument("--predictions", type=Path, default=Path("predictions"),
                       help="the folder people's answers are written to and the results page reads predictions files "
                            "from; the only place the server writes (default: ./predictions)")
    add_split(serve)
    serve.set_defaults(run=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> None:
    from pipeline.serve.app import LOCAL_HOSTS, create_app

    app = create_app(args.source, args.predictions, args.split, args.host, warm=True)  # imports Flask first
    from werkzeug.serving import make_server  # Flask's own server library

    try:
        server = make_server(args.host, args.port, app, threaded=True)
    except (OSError, SystemExit) as error:  # werkzeug exits on a port in use
        raise RoomspaceError(f"cannot listen on {args.host}:{args.port} ({error or 'in use'}); "
                             "choose another --port") from None
    shown = f"[{args.host}]" if ":" in args.host else args.host
    if args.host.strip("[]").lower() not in LOCAL_HOSTS:
        print(f"roomspace serve: warning: bound to {args.host}: whoever reaches this machine can browse the build and "
              "write answers into the predictions folder", file=sys.stderr)
    print(f"roomspace serve: {args.source} at http://{shown}:{server.server_port}/ (answers go to "
          f"{args.predictions}/); Ctrl-C stops", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()


def cmd_render(args: argparse.Namespace) -> None:
    from pipeline.render.job import render_rooms

    report = render_rooms(args.scenes, args.out, rooms=args.rooms, seed=args.seed, grid=args.grid,
                          renderer=asked_renderer(args), force=args.force, progress=not args.quiet)
    print(f"{args.out}: {report.rooms} rooms, {report.rendered} images drawn now, {report.kept} already there")


def build_parser() -> argparse.ArgumentParser:
    from pipeline import __version__

    parser = argparse.ArgumentParser(prog="roomspace", description=__doc__)
    parser.add_argument("--version", action="version", version=f"roomspace {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in (add_scenes, add_build, add_validate, add_push, add_schemas, add_prompts, add_export, add_score,
                add_audit, add_run_model, add_render, add_serve):
        add(commands)
    return parser


def _terminated(signum, frame) -> None:
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        args.run(args)
    except (RoomspaceError, OSError) as error:
        print(f"roomspace {args.command}: error: {error}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as error:  # importlib.metadata's PackageNotFoundError too: a distribution not installed
        extra = extra_of((error.name or "").partition(".")[0])
        if extra is None:
            raise
        print(f"roomspace {args.command}: error: this command needs the {extra} extra ({error}): "
              f"pip install 'roomspace[{extra}]'", file=sys.stderr)
        return 1
    except KeyboardInterrupt as stop:  # SIGINT, or SIGTERM as Terminated
        name = "SIGTERM" if isinstance(stop, Terminated) else "SIGINT"
        kept = getattr(stop, "kept", "what was finished is kept")
        print(f"roomspace {args.command}: stopped by {name}; {kept}; re-run the same command to resume",
              file=sys.stderr)
        return 143 if isinstance(stop, Terminated) else 130
    finally:
        signal.signal(signal.SIGTERM, previous)
    return 0


if __name__ == "__main__":
    sys.exit(main())
