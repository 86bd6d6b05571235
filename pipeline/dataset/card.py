"""The dataset card: statistics gathered from the rows, and the README.md that declares every configuration.

The card's prose is data (pipeline/data/card.md, a string.Template); this module fills in the
YAML header (what the Hub indexes: sizes, task and size categories, sources, every configuration
with its features, row count and byte sizes), the statistics tables and the example items.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from string import Template

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from datasets.info import DatasetInfo, DatasetInfosDict
from huggingface_hub import DatasetCardData

from pipeline.data import data_text
from pipeline.dataset.audit import BlindUnavailable, audit_table, files_audit
from pipeline.dataset.layout import CONFIG, config_columns
from pipeline.dataset.manifest import (DATASET_SPLIT, MapCounts, PairCounts, QuestionCounts, SettingCounts, Stats,
                                       data_folder)
from pipeline.dataset.rows import features_of_config
from pipeline.dataset.vision import IMAGE_OF_STORY
from pipeline.spatial.facts import HARD_SETTINGS, SETTINGS
from pipeline.spatial.ladder import REASONERS
from pipeline.spatial.relations import DIRECTIONS
from pipeline.spatial.topology import RCC8
from pipeline.text.agents import FRAMINGS, AgentItem
from pipeline.text.items import FORMS, ITEM_SETTINGS, RCC8_SETTING, RELATION_FORM
from pipeline.text.kinds import Kind, kind_of, parse
from pipeline.text.pictured import picture_kind
from pipeline.text.prompts import MAP_QUESTION, PAIR_MODALITIES


# The fields of a question that `room_stats` reads, of every kind; an image kind's questions are read
# for PICTURED too, an agent kind's for FRAMED, a map kind's for MAPPED.
COUNTED = ("setting", "view", "question_type", "candidate", "answer_set", "answer_set_size", "true_relation",
           "path_decides", "layout_decides", "tightness", "hops", "topology", "level", "form")
PICTURED = ("pair", "modality", "image_name")
FRAMED = ("kind", "frame_changes", "frame_angle")
MAPPED = ("facts", "options")


def room_stats(kind: Kind, questions: Sequence[Mapping], room_type: str) -> Stats:
    """One room's counts for one configuration of `kind`; rooms add up (`Stats.__add__`).

    `questions` are the room's questions as their file holds them (plain values: a dict each, lists;
    at least the fields COUNTED, "topology" only where `counts_topology`, and PICTURED or FRAMED for
    those kinds), none if the room was skipped. What each kind counts is its own section of `Stats`:
    every kind its settings, an image kind (Kind.images) its images and pair questions, a kind whose
    row record is an AgentItem its framings, a kind asking for maps (MAP questions, Kind.questions)
    its maps instead of settings. Counts only (tightness in millionths), so that merging shards in
    any grouping gives the same sums.
    """
    stats = Stats(rooms=int(bool(questions)), skipped_rooms=int(not questions), rows=len(questions),
                  room_types={room_type: 1} if questions else {})
    pictured, framed = kind.images, issubclass(kind.maker().RECORD, AgentItem)
    if pictured and questions:
        stats.images = len({row["image_name"] for row in questions})  # the images its questions go with
    for row in questions:
        if row["question_type"] == MAP_QUESTION:
            count_map(stats, row)
            continue
        paired = pictured and row["pair"] is not None
        if paired:
            count_pair(stats, row)
        if framed and not paired:
            count_framing(stats, row)
        count_setting(stats, row)
    return stats


def count_setting(stats: Stats, row: Mapping) -> None:
    setting = stats.settings.setdefault(row["setting"], SettingCounts())
    setting.rows += 1
    if row["level"] is not None:
        setting.levels = count(setting.levels, str(row["level"]))
    whole_story = row["form"] != RELATION_FORM
    if whole_story:
        setting.forms = {} if setting.forms is None else setting.forms
        count_asked(setting.forms.setdefault(row["form"], QuestionCounts()), row)
    if row["question_type"] == "YN":
        if row["candidate"] in row["answer_set"]:
            setting.yes += 1
        else:
            setting.no += 1
        if row["setting"] == RCC8_SETTING:
            setting.asked = count(setting.asked, row["true_relation"])
        return
    if whole_story:
        return  # its answer set is of another calculus: the setting's FR counts are its pair questions'
    count(setting.sizes, str(row["answer_set_size"]))
    setting.path_decides = (setting.path_decides or 0) + int(row["path_decides"])
    setting.layout_decides = (setting.layout_decides or 0) + int(row["layout_decides"])
    setting.tightness_millionths = (setting.tightness_millionths or 0) + round(row["tightness"] * 1e6)
    if counts_topology(row):
        count(stats.hops, str(row["hops"]))
        for fact in row["topology"]:
            count(stats.topology, fact["relation"])


def counts_topology(row: Mapping) -> bool:
    """Whether `room_stats` counts this question's hops and footprint topology: the room's one, an FR pair
    question of the first setting seen from above (the build reads the topology of these rows alone)."""
    return (row["question_type"] not in ("YN", MAP_QUESTION) and row["form"] == RELATION_FORM
            and row["setting"] == SETTINGS[0] and row["view"] == "top_down")


def count_map(stats: Stats, row: Mapping) -> None:
    """A map question: by setting, with the facts a map must keep and the objects it draws."""
    stats.maps = {} if stats.maps is None else stats.maps
    asked = stats.maps.setdefault(row["setting"], MapCounts())
    asked.maps += 1
    asked.facts += len(row["facts"])
    asked.pair_facts += sum(fact["object"] is not None for fact in row["facts"])
    asked.objects += len(row["options"])
    asked.tightness_millionths += round(row["tightness"] * 1e6)


def count_pair(stats: Stats, row: Mapping) -> None:
    """A pair question of an image kind: by modality, and once (in its first modality) by image and answer."""
    stats.pair_modalities = count(stats.pair_modalities, row["modality"])
    if row["modality"] != PAIR_MODALITIES[0]:
        return
    stats.pair_rooms = 1
    stats.pair_questions = {} if stats.pair_questions is None else stats.pair_questions
    asked = stats.pair_questions.setdefault(row["image_name"], PairCounts())
    if row["question_type"] == "FR":
        asked.FR += 1
        asked.answers = count(asked.answers, row["true_relation"])
    elif row["candidate"] in row["answer_set"]:
        asked.Yes += 1
    else:
        asked.No += 1


def count_framing(stats: Stats, row: Mapping) -> None:
    """An agent row (not a pair question): by its framing, and by frame changes and the angle turned."""
    stats.agent_kinds = {} if stats.agent_kinds is None else stats.agent_kinds
    count_asked(stats.agent_kinds.setdefault(row["kind"], QuestionCounts()), row)
    stats.frame_angles = count(stats.frame_angles, f"{row['frame_changes']} changes, {row['frame_angle']} degrees")


def count_asked(asked: QuestionCounts, row: Mapping) -> None:
    if row["question_type"] == "FR":
        asked.FR += 1
        asked.sizes += row["answer_set_size"]
    elif row["candidate"] in row["answer_set"]:
        asked.Yes += 1
    else:
        asked.No += 1


def count(counts: dict[str, int] | None, key: str) -> dict[str, int]:
    """`counts` (a new mapping if None) with one more `key`."""
    counts = {} if counts is None else counts
    counts[key] = counts.get(key, 0) + 1
    return counts


def settings_table(stats: Stats) -> str:
    lines = ["| setting | rows | YN Yes | YN No | Yes share | mean FR answer-set size "
             "| FR answer-set sizes (size: count) | FR path decides | FR layout decides | mean FR tightness "
             "| questions by level (level: count) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    present = stats.settings
    # a hard configuration's settings are its own (an empty build lists the paper's)
    listed = HARD_SETTINGS if set(present) & set(HARD_SETTINGS) else ITEM_SETTINGS
    for setting in [*listed, *sorted(set(present) - set(listed))]:
        s = present.get(setting, SettingCounts())
        yn = s.yes + s.no
        sizes = Counter({int(k): v for k, v in s.sizes.items()})
        fr = sum(sizes.values())
        mean = sum(k * v for k, v in sizes.items()) / fr if fr else 0.0
        spread = ", ".join(f"{k}: {sizes[k]}" for k in sorted(sizes))
        shares = (f"{(s.path_decides or 0) / fr:.3f} | {(s.layout_decides or 0) / fr:.3f} | "
                  f"{(s.tightness_millionths or 0) / fr / 1e6:.3f}" if fr else "- | - | -")
        lines.append(f"| {setting} | {s.rows} | {s.yes} | {s.no} | "
                     f"{s.yes / yn if yn else 0:.3f} | {f'{mean:.2f}' if fr else '-'} | {spread} | {shares} | "
                     f"{_counts(s.levels, LEVELS)} |")
    return "\n".join(lines)


def forms_table(stats: Stats) -> str:
    """A hard configuration's whole-story questions per setting and form ("" if it has none): the settings
    table's FR columns count its pair questions only, as a form's answer sets are of another calculus."""
    asked = [(setting, form, counts) for setting, s in stats.settings.items()
             for form, counts in sorted((s.forms or {}).items(), key=lambda item: declared_order(FORMS)(item[0]))]
    if not asked:
        return ""
    lines = ["", "Whole-story questions (the table above counts their YN answers and levels, not their FR answer "
             "sets):", "", "| setting | form | FR | mean FR answer-set size | YN Yes | YN No | Yes share |",
             "|---|---|---|---|---|---|---|"]
    for setting, form, counts in sorted(asked, key=lambda item: declared_order(HARD_SETTINGS)(item[0])):
        yn = counts.Yes + counts.No
        mean = f"{counts.sizes / counts.FR:.2f}" if counts.FR else "-"
        lines.append(f"| {setting} | {form} | {counts.FR} | {mean} | {counts.Yes} | {counts.No} | "
                     f"{f'{counts.Yes / yn:.3f}' if yn else '-'} |")
    return "\n".join(lines) + "\n"


def map_table(stats: Stats) -> str:
    """A map configuration's questions per setting: the facts a map must keep, the objects it draws."""
    lines = ["| setting | maps | mean facts stated | mean facts relating two objects | mean objects drawn "
             "| mean tightness |", "|---|---|---|---|---|---|"]
    for setting, m in sorted((stats.maps or {}).items(), key=lambda item: declared_order(ITEM_SETTINGS)(item[0])):
        lines.append(f"| {setting} | {m.maps} | {m.facts / m.maps:.2f} | {m.pair_facts / m.maps:.2f} | "
                     f"{m.objects / m.maps:.2f} | {m.tightness_millionths / m.maps / 1e6:.3f} |")
    return "\n".join(lines)


def _counts(counts: Mapping[str, int] | None, order: tuple[str, ...]) -> str:
    return ", ".join(f"{code}: {counts[code]}" for code in order if code in (counts or {})) or "none"


def images_note(stats: Stats) -> str:
    return f" questions, about {stats.images} images (each stored once)" if stats.images is not None else ""


def declared_order(order: Sequence[str]):
    """The sort key putting names in `order` first, as declared, then any others by name: the card's
    order is a function of the data alone, not of which rooms came first or whether the counts were
    read back from manifest.json (whose keys are sorted), so a resumed build writes the same card."""
    return lambda name: (order.index(name) if name in order else len(order), name)


# why a hard configuration has no question in a room (docs/semantics.md section 22)
SKIPPED_HARD = "fewer than n prominent objects, or no pair whose answer only search gives"
LEVELS = tuple(map(str, range(len(REASONERS))))  # the difficulty ladder's, as manifest.json's keys
IMAGE_ORDER = tuple(IMAGE_OF_STORY.values())  # the plan, the door view, the observer's first-person view


def image_order(name: str) -> tuple:
    """The sort key of an image kind's image names: by kind of picture (IMAGE_ORDER; a picture marked
    by letters, pipeline.text.pictured.picture_kind, beside its kind's), further stances' first-person
    views (first_person_2, first_person_3, ...) after the observer's by number, any other name last."""
    number = name.rpartition("_")[2]
    return declared_order(IMAGE_ORDER)(picture_kind(name))[0], int(number) if number.isdigit() else 1, name


def plural(count: int) -> str:
    return "" if count == 1 else "s"


def agent_lines(stats: Stats, hard: bool = False) -> str:
    """An agent configuration's rows by kind (story frame, frame changes) and by the angle turned; a
    hard one's with the settings of its rooms where a framing asks nothing (docs/semantics.md section 22)."""
    if stats.agent_kinds is None:
        return ""
    # by frame changes, then angle, as numbers (the keys are count_framing's: "1 changes, 90 degrees")
    angles = sorted((tuple(map(int, re.findall(r"\d+", key))), n) for key, n in (stats.frame_angles or {}).items())
    shown = ", ".join(f"{changes} change{plural(changes)}, {angle} degrees: {n}" for (changes, angle), n in angles)
    skipped = (" settings without FR (of rooms with items x settings) | without YN |", "---|---|") if hard else ("", "")
    lines = [f"- agent rows by frame changes and angle between the story's facing and the question's: {shown}",
             "", f"| kind | FR | mean FR answer-set size | YN Yes | YN No |{skipped[0]}",
             f"|---|---|---|---|---|{skipped[1]}"]
    slots = stats.rooms * len(HARD_SETTINGS)  # a hard framing asks at most one FR and one YN question per setting
    framings = {**({kind: QuestionCounts() for kind in FRAMINGS} if hard else {}), **stats.agent_kinds}
    for kind, asked in sorted(framings.items(), key=lambda item: declared_order(FRAMINGS)(item[0])):
        mean = f"{asked.sizes / asked.FR:.2f}" if asked.FR else "-"
        left = f" {slots - asked.FR} | {slots - asked.Yes - asked.No} |" if hard else ""
        lines.append(f"| {kind} | {asked.FR} | {mean} | {asked.Yes} | {asked.No} |{left}")
    return "\n".join(lines) + "\n\n"


def pair_lines(stats: Stats) -> str:
    """A vision configuration's pair questions, each asked in the modalities found: per image and answer."""
    if stats.pair_questions is None:
        return ""
    asked_as = ", ".join(m for m in PAIR_MODALITIES if m in (stats.pair_modalities or {}))
    lines = [f"- pair questions (each asked as {asked_as}): rooms with any: "
             f"{stats.pair_rooms} of {stats.rooms}; per room: "
             f"{sum(v.FR + v.Yes + v.No for v in stats.pair_questions.values()) / max(stats.rooms, 1):.1f}"]
    for image, asked in sorted(stats.pair_questions.items(), key=lambda item: image_order(item[0])):
        lines.append(f"- pair questions, {image} image: {asked.FR} FR, {asked.Yes + asked.No} YN "
                     f"({asked.Yes} Yes, {asked.No} No); FR answers: {_counts(asked.answers, DIRECTIONS)}")
    return "\n".join(lines) + "\n"


def statistics_section(stats_by_config: Mapping[str, Stats]) -> str:
    parts = []
    for config, stats in stats_by_config.items():
        settings = stats.settings
        yes = sum(s.yes for s in settings.values())
        no = sum(s.no for s in settings.values())
        types = ", ".join(f"{k}: {v}" for k, v in sorted(stats.room_types.items()))
        hops = ", ".join(f"{k} hop{plural(int(k))}: {v}"
                         for k, v in sorted(stats.hops.items(), key=lambda kv: int(kv[0])))
        asked = settings[RCC8_SETTING].asked if RCC8_SETTING in settings else None
        head = (f"### {config}\n\n"
                f"- rows: {stats.rows}{images_note(stats)}; rooms with items: {stats.rooms}; "
                f"rooms skipped ({SKIPPED_HARD if parse(config)[1].hard else 'fewer than n prominent objects'}): "
                f"{stats.skipped_rooms}\n"
                f"- room types: {types}\n")
        if stats.maps is not None:  # a configuration of maps asks no YN or FR question
            parts.append(f"{head}\n{map_table(stats)}\n")
            continue
        parts.append(
            head +
            f"- YN balance: {yes} Yes, {no} No ({yes / (yes + no) if yes + no else 0:.3f} Yes)\n"
            f"- question hops (per room): {hops or 'none'}\n"
            f"- footprint topology (per room, every pair and each object with the room): "
            f"{_counts(stats.topology, RCC8)}\n"
            f"- rcc8 questions by the asked pair's relation: {_counts(asked, RCC8)}\n"
            f"{pair_lines(stats)}{agent_lines(stats, parse(config)[1].hard)}\n"
            f"{settings_table(stats)}\n{forms_table(stats)}"
        )
    return "\n".join(parts)


def example_section(examples: list[dict]) -> str:
    blocks = []
    for row in examples:
        if row["setting"] == RCC8_SETTING:
            why = f"the footprints' RCC-8 relation: {row['true_relation']}"
        else:
            why = (f"consistent relations: {', '.join(row['answer_set'])}; "
                   f"rasterised scene: {row['true_relation']}; continuous scene: {row['continuous_relation']}")
        path = f"\nReasoning path: {row['path_text']}\n" if row.get("path_text") else ""
        blocks.append(
            f"**{row['id']}** ({row['setting']}, {row['view']}, {row['question_type']})\n\n"
            f"> {row['story']}\n>\n> {row['question']}\n\n"
            f"Answer: **{row['answer']}** ({why})\n{path}"
        )
    return "\n".join(blocks)


# The Hub's size buckets (huggingface_hub.DatasetCardData's `size_categories`): (upper bound, name).
SIZE_CATEGORIES = ((10 ** 3, "n<1K"), (10 ** 4, "1K<n<10K"), (10 ** 5, "10K<n<100K"), (10 ** 6, "100K<n<1M"),
                   (10 ** 7, "1M<n<10M"), (10 ** 8, "10M<n<100M"), (10 ** 9, "100M<n<1B"), (10 ** 10, "1B<n<10B"),
                   (10 ** 11, "10B<n<100B"), (10 ** 12, "100B<n<1T"))


def size_category(rows: int) -> str:
    """The Hub's bucket of a row count: 999 rows are "n<1K", 1000 to 9999 "1K<n<10K", and so on."""
    return next((name for bound, name in SIZE_CATEGORIES if rows < bound), "n>1T")


def task_categories(configs: Sequence[str]) -> list[str]:
    categories = ["question-answering"]
    if any(kind_of(c).images for c in configs):
        categories.append("visual-question-answering")
    return categories


@dataclass(frozen=True)
class ConfigSize:
    """The bytes of one configuration as the Hub and `datasets` report them."""

    download: int = 0  # its Parquet files on disk: what a user downloads
    arrow: int = 0  # its rows held as Arrow tables: what `load_dataset` writes to its cache
    rows: int = 0  # its rows: a question each

    def __add__(self, other: ConfigSize) -> ConfigSize:
        return ConfigSize(self.download + other.download, self.arrow + other.arrow, self.rows + other.rows)


Measured = Mapping[tuple[Path, str], ConfigSize]  # (file, configuration) -> its `file_size`, taken already


def config_size(files: Sequence[Path], config: str | None = None, measured: Measured | None = None) -> ConfigSize:
    """The sizes of one configuration's Parquet files: each file's `file_size`, read now unless
    `measured` has it (the build takes each shard's as it writes it: pipeline.dataset.build.write_shard)."""
    measured = measured or {}
    return sum((measured[path, config] if (path, config) in measured else file_size(path, config) for path in files),
               ConfigSize())


def file_size(path: Path, config: str | None = None) -> ConfigSize:
    """The sizes of one file of a configuration (`config`'s rows only, in its columns, where the file
    holds other configurations' too: pipeline.dataset.layout).

    `arrow` is measured as `datasets` measures it, by reading: its Parquet builder reads a file
    in batches of the first row group's rows (a shard is one row group), casts each to the
    features (the shards already have that schema) and adds up `pa_table.nbytes`, which becomes the
    split's `num_bytes` and, summed over splits, `dataset_size`. The Parquet metadata's
    uncompressed sizes would be free to read but are another quantity: pages are dictionary and
    run-length encoded. Measured on 20 rooms: 2.66 MB in the metadata against 4.33 MB in Arrow for
    n5_m4_d144; the read sums matched `load_dataset`'s `num_bytes` to the byte. The read goes one
    row group at a time (memory: one shard), at about 0.4 GB/s of Arrow for text shards on 2 cores.
    """
    arrow = rows = 0
    parquet = pq.ParquetFile(path)
    columns, shared = config_columns(parquet.schema_arrow, config, str(path))
    for group in range(parquet.num_row_groups):
        if shared:  # as `datasets` reads it: the card's `filters` and `columns` (`shared_reading`)
            with open(path, "rb") as file:
                fragment = ds.ParquetFileFormat().make_fragment(file).subset(row_group_ids=[group])
                tables = [pa.Table.from_batches([batch]) for batch in fragment.to_batches(
                    batch_size=fragment.row_groups[0].num_rows, columns=columns, filter=pc.field(CONFIG) == config,
                    batch_readahead=0, fragment_readahead=0)]
        else:
            tables = [parquet.read_row_group(group)]
        rows += sum(table.num_rows for table in tables)
        arrow += sum(table.nbytes for table in tables)
    return ConfigSize(Path(path).stat().st_size, arrow, rows)


PARQUET_GROUP_ROWS = 1 << 20  # the rows of a row group pq.write_table writes when not told (rows.write_parquet)
ARROW_CHUNK_BYTES = 1 << 31  # a column read back holding more (of one row group) comes in several chunks


def written_size(table: pa.Table, path: Path) -> ConfigSize:
    """`file_size` of the file `path` of one configuration's rows just written from `table`
    (rows.write_parquet), its Arrow bytes counted in `table`, not read back (`read_back_bytes`);
    read back where the file would be read in several row groups or chunks."""
    if table.num_rows > PARQUET_GROUP_ROWS or table.nbytes >= ARROW_CHUNK_BYTES:
        return file_size(path)
    return ConfigSize(Path(path).stat().st_size, sum(read_back_bytes(chunk) for column in table.columns
                                                     for chunk in column.chunks), table.num_rows)


def read_back_bytes(array: pa.Array) -> int:
    """`nbytes` of `array` once written to Parquet and read back in one piece (`file_size`'s reading
    of a file of one configuration). The reader gives the same values in other buffers: a validity
    bitmap for every number column of a nullable field (all of ours are), for any other column only
    where it holds a null (a child of a null struct is null too: `flatten`); `nbytes` counts the
    values' bytes, an offset a value, and no bitmap of a struct's own. The card's test compares it with
    `file_size` on a build of every kind (tests/dataset/test_card.py); a file shared by several
    configurations is read through a filter, whose arrays are laid out otherwise: those are read."""
    rows, kind = len(array), array.type
    bitmap = (rows + 7) // 8
    nulls = bitmap if array.null_count else 0
    if pa.types.is_struct(kind):
        return sum(read_back_bytes(child) for child in array.flatten())
    if pa.types.is_list(kind):
        return nulls + 4 * rows + read_back_bytes(array.flatten())
    if pa.types.is_string(kind) or pa.types.is_binary(kind):
        return nulls + 4 * rows + (pc.sum(pc.binary_length(array)).as_py() or 0)
    if pa.types.is_boolean(kind):
        return nulls + bitmap
    return bitmap + rows * kind.byte_width


def data_files(config: str, splits: Sequence[str]) -> list[dict]:
    """A configuration's files per split, as the card declares them. A test-only build keeps the
    pattern it has always had (its card stays byte-identical); with training splits beside it, each
    split reads its own files. The files are those of its folder (pipeline.dataset.manifest.data_folder)."""
    folder = data_folder(config)
    if list(splits) == [DATASET_SPLIT]:
        return [{"split": DATASET_SPLIT, "path": f"{folder}/*.parquet"}]
    return [{"split": split, "path": f"{folder}/{split}-*.parquet"} for split in splits]


def shared_reading(config: str) -> dict:
    """What the card tells `datasets` to read of a folder the configuration shares with others
    (Kind.shared_images): its rows (`filters` on the config column) in its columns (`columns`)."""
    if not kind_of(config).shared_images:
        return {}
    return {"filters": [[CONFIG, "==", config]], "columns": list(features_of_config(config))}


def card_yaml(configs: list[str], pretty_name: str, sizes: Mapping[str, Mapping[str, ConfigSize]]) -> str:
    """The card's YAML header; `sizes` per configuration and split."""
    data = DatasetCardData(
        pretty_name=pretty_name,
        license="apache-2.0",
        language=["en"],
        annotations_creators=["machine-generated"],  # answers come from the consistency checker
        language_creators=["machine-generated"],  # stories and questions come from templates
        multilinguality=["monolingual"],
        size_categories=[size_category(sum(size.rows for c in configs for size in sizes[c].values()))],
        # `roomspace build` reads scenes of ProcTHOR's own generator only: new houses, no existing dataset.
        source_datasets=["original"],
        task_categories=task_categories(configs),
        tags=["spatial-reasoning", "qualitative-spatial-reasoning", "procthor", "benchmark"],
        # The first configuration is the default: what load_dataset(path) gives without a name.
        configs=[{"config_name": c, "data_files": data_files(c, list(sizes[c])), **shared_reading(c),
                  **({"default": True} if c == configs[0] else {})} for c in configs],
    )
    infos = DatasetInfosDict()
    for c in configs:
        infos[c] = DatasetInfo(
            features=features_of_config(c), config_name=c,
            splits={split: {"name": split, "num_examples": size.rows, "num_bytes": size.arrow}
                    for split, size in sizes[c].items()},
            download_size=sum(size.download for size in sizes[c].values()),
            dataset_size=sum(size.arrow for size in sizes[c].values()),
        )
    infos.to_dataset_card_data(data)
    return data.to_yaml()


def all_nine_table(stats_by_split: Mapping[str, Mapping[str, Stats]]) -> str:
    """Per configuration and setting, the share of FR questions whose answer set is all nine relations
    (they can only be answered "all nine", and their YN questions only Yes), per split."""
    splits = list(stats_by_split)
    lines = [f"| configuration | setting | {' | '.join(splits)} |", "|---|---|" + "---|" * len(splits)]
    for config in next(iter(stats_by_split.values())):
        for setting in SETTINGS:
            shares = []
            for split in splits:
                counted = stats_by_split[split][config].settings.get(setting)
                sizes = counted.sizes if counted else {}
                fr = sum(sizes.values())
                shares.append(f"{sizes.get(str(len(DIRECTIONS)), 0) / fr:.3f} of {fr}" if fr else "-")
            lines.append(f"| {config} | {setting} | {' | '.join(shares)} |")
    return "\n".join(lines)


def split_table(rooms: Mapping[str, int], stats_by_split: Mapping[str, Mapping[str, Stats]]) -> str:
    """Rooms and questions per split and configuration."""
    splits = list(stats_by_split)
    lines = [f"| | {' | '.join(splits)} |", "|---|" + "---|" * len(splits),
             f"| rooms | {' | '.join(str(rooms[split]) for split in splits)} |"]
    for config in next(iter(stats_by_split.values())):
        counts = " | ".join(str(stats_by_split[split][config].rows) for split in splits)
        lines.append(f"| {config} questions | {counts} |")
    return "\n".join(lines)


def training_section(rooms: Mapping[str, int], stats_by_split: Mapping[str, Mapping[str, Stats]],
                     houses: Mapping) -> str:
    """The card's section on the training splits (pipeline/data/card_training.md); "" for a test-only build."""
    if list(stats_by_split) == [DATASET_SPLIT]:
        return ""
    return Template(data_text("card_training.md")).substitute(
        splits=split_table(rooms, stats_by_split), distinct=houses["distinct"],
        houses=", ".join(f"{count} {split}" for split, count in houses["houses"].items()),
        all_nine=all_nine_table(stats_by_split))


CARD_ROOMS = 300  # the card's audit reads the first test rooms: seconds a configuration, whatever the build's size
CARD_LEAST_ROOMS = 8  # fewer test rooms give the baselines nothing to learn from: their numbers would be noise


def audit_section(files: Mapping[str, Mapping[str, Sequence[Path]]], rooms: int, workers: int = 1) -> str:
    """The card's shortcut audit (pipeline.dataset.audit) of every configuration's first CARD_ROOMS
    test rooms, fitted on the train split where there is one, or why there is none (`rooms`: the
    build's test rooms; `workers`: processes auditing configurations at once)."""
    if rooms < CARD_LEAST_ROOMS:
        return (f"Not measured for a build of {rooms} test rooms: the blind baselines need {CARD_LEAST_ROOMS} or "
                "more to learn from (`roomspace audit` on a larger build).")
    test = {config: by_split[DATASET_SPLIT] for config, by_split in files.items()}
    train = {config: by_split["train"] for config, by_split in files.items()} if all(
        "train" in by_split for by_split in files.values()) else None
    try:
        table = audit_table(files_audit(test, train, range(CARD_ROOMS), workers=workers))
    except BlindUnavailable as reason:
        return f"Not measured for this build: {reason}."
    fitted = "the train split" if train else "each half of the rooms, scored on the other half"
    hard = (" The hard configurations (`*_hard`) are drawn so too, and ask only what the checker's search "
            "alone answers: rank the strongest models there." if any(parse(config)[1].hard for config in files) else "")
    family = ("Compare models on the balanced configurations (`*_balanced`): their questions were drawn "
              "so that a question without its story or image says little of its answer." + hard
              if any(parse(config)[1].balanced for config in files)
              else "This build has no balanced configurations (`--balanced`): read scores beside the blind "
                   "accuracies below.")
    return (f"{family} The blind baselines answer without the story or image (majority: the most frequent "
            f"answer of what the question shows; learned: a logistic regression on it), fitted on {fitted}, "
            f"on the first {CARD_ROOMS} test rooms at most; `roomspace audit` measures the whole split. "
            f"Accuracies in percent.\n\n{table}\n")


def dataset_card(name: str, seed: int, rooms: Mapping[str, int], stats_by_split: Mapping[str, Mapping[str, Stats]],
                 examples: list[dict], files: Mapping[str, Mapping[str, Sequence[Path]]],
                 houses: Mapping | None = None, renderer: str | None = None, workers: int = 1,
                 measured: Measured | None = None) -> str:
    """README.md of a build. `rooms` and `stats_by_split` per split (card order), the statistics per
    configuration; `files` are each configuration's Parquet files per split (for the byte sizes the
    header declares, those `measured` already not read again: `config_size`); `houses` is the training
    splits' house check (pipeline.dataset.build.check_houses); `renderer` what rendered the images, where
    not the offline renderer (its settings in words); `workers` the processes the audit may use
    (`audit_section`)."""
    stats_by_config = stats_by_split[DATASET_SPLIT]
    configs = list(stats_by_config)
    sizes = {c: {split: config_size(files[c][split], c, measured) for split in stats_by_split} for c in configs}
    header = card_yaml(configs, name, sizes)
    body = Template(data_text("card.md")).substitute(
        name=name, seed=seed, rooms=rooms[DATASET_SPLIT], configs=", ".join(f"`{c}`" for c in configs), first=configs[0],
        relations=", ".join(DIRECTIONS), statistics=statistics_section(stats_by_config),
        examples=example_section(examples), training=training_section(rooms, stats_by_split, houses),
        audit=audit_section(files, rooms[DATASET_SPLIT], workers),
        renderer="" if renderer is None else f" The images were rendered by {renderer}, the same views and labels as "
                                             "the offline renderer's (pipeline/render/blender.py).",
    )
    return f"---\n{header}\n---\n\n{body}"
