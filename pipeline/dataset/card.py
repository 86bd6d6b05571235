"""The dataset card: statistics gathered from the rows, and the README.md that declares every configuration.

The card's prose is data (pipeline/data/card.md, a string.Template); this module fills in the
YAML header, the statistics tables and the example items.
"""

from __future__ import annotations

from collections import Counter
from string import Template

from datasets.info import DatasetInfo, DatasetInfosDict
from huggingface_hub import DatasetCardData

from pipeline.data import data_text
from pipeline.dataset.manifest import DATASET_SPLIT
from pipeline.dataset.rows import features_of_config
from pipeline.spatial.facts import SETTINGS
from pipeline.spatial.relations import DIRECTIONS
from pipeline.spatial.topology import RCC8
from pipeline.text.items import ITEM_SETTINGS, RCC8_SETTING


def room_stats(rows: list[dict], room_type: str, skipped: bool) -> dict:
    """One room's counts for one configuration; `merge` adds rooms up. Keys are strings (JSON).

    Counts only (tightness in millionths), so that merging shards in any grouping gives the same sums.
    """
    stats: dict = {"rooms": 0 if skipped else 1, "skipped_rooms": int(skipped), "rows": len(rows),
                   "room_types": {} if skipped else {room_type: 1}, "hops": {}, "settings": {}, "topology": {}}
    for row in rows:
        setting = stats["settings"].setdefault(row["setting"], {"rows": 0, "yes": 0, "no": 0, "sizes": {}})
        setting["rows"] += 1
        if row["question_type"] == "YN":
            setting["yes" if row["candidate"] in row["answer_set"] else "no"] += 1
            if row["setting"] == RCC8_SETTING:
                _count(setting.setdefault("asked", {}), row["true_relation"])
        else:
            _count(setting["sizes"], str(row["answer_set_size"]))
            setting["path_decides"] = setting.get("path_decides", 0) + row["path_decides"]
            setting["layout_decides"] = setting.get("layout_decides", 0) + row["layout_decides"]
            setting["tightness_millionths"] = setting.get("tightness_millionths", 0) + round(row["tightness"] * 1e6)
            if row["setting"] == SETTINGS[0] and row["view"] == "top_down":
                _count(stats["hops"], str(row["hops"]))
                for fact in row["topology"]:
                    _count(stats["topology"], fact["relation"])
    return stats


def _count(counts: dict, key: str) -> None:
    counts[key] = counts.get(key, 0) + 1


def merge(total: dict, part: dict) -> dict:
    for key, value in part.items():
        total[key] = merge(total.get(key, {}), value) if isinstance(value, dict) else total.get(key, 0) + value
    return total


def settings_table(stats: dict) -> str:
    lines = ["| setting | rows | YN Yes | YN No | Yes share | mean FR answer-set size "
             "| FR answer-set sizes (size: count) | FR path decides | FR layout decides | mean FR tightness |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    present = stats.get("settings", {})
    for setting in [*ITEM_SETTINGS, *sorted(set(present) - set(ITEM_SETTINGS))]:
        s = present.get(setting, {"rows": 0, "yes": 0, "no": 0, "sizes": {}})
        yn = s["yes"] + s["no"]
        sizes = Counter({int(k): v for k, v in s["sizes"].items()})
        fr = sum(sizes.values())
        mean = sum(k * v for k, v in sizes.items()) / fr if fr else 0.0
        spread = ", ".join(f"{k}: {sizes[k]}" for k in sorted(sizes))
        shares = (f"{s.get('path_decides', 0) / fr:.3f} | {s.get('layout_decides', 0) / fr:.3f} | "
                  f"{s.get('tightness_millionths', 0) / fr / 1e6:.3f}" if fr else "- | - | -")
        lines.append(f"| {setting} | {s['rows']} | {s['yes']} | {s['no']} | "
                     f"{s['yes'] / yn if yn else 0:.3f} | {f'{mean:.2f}' if fr else '-'} | {spread} | {shares} |")
    return "\n".join(lines)


def _counts(counts: dict, order: tuple[str, ...]) -> str:
    return ", ".join(f"{code}: {counts[code]}" for code in order if code in counts) or "none"


def statistics_section(stats_by_config: dict[str, dict]) -> str:
    parts = []
    for config, stats in stats_by_config.items():
        settings = stats.get("settings", {})
        yes = sum(s["yes"] for s in settings.values())
        no = sum(s["no"] for s in settings.values())
        types = ", ".join(f"{k}: {v}" for k, v in sorted(stats.get("room_types", {}).items()))
        hops = ", ".join(f"{k} hops: {v}" for k, v in sorted(stats.get("hops", {}).items(), key=lambda kv: int(kv[0])))
        asked = settings.get(RCC8_SETTING, {}).get("asked", {})
        parts.append(
            f"### {config}\n\n"
            f"- rows: {stats['rows']}; rooms with items: {stats['rooms']}; "
            f"rooms skipped (fewer than n prominent objects): {stats['skipped_rooms']}\n"
            f"- room types: {types}\n"
            f"- YN balance: {yes} Yes, {no} No ({yes / (yes + no) if yes + no else 0:.3f} Yes)\n"
            f"- question hops (per room): {hops}\n"
            f"- footprint topology (per room, every pair and each object with the room): "
            f"{_counts(stats.get('topology', {}), RCC8)}\n"
            f"- rcc8 questions by the asked pair's relation: {_counts(asked, RCC8)}\n\n"
            f"{settings_table(stats)}\n"
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


def card_yaml(configs: list[str], rows_by_config: dict[str, int], pretty_name: str) -> str:
    data = DatasetCardData(
        pretty_name=pretty_name,
        license="apache-2.0",
        language=["en"],
        task_categories=["question-answering"],
        tags=["spatial-reasoning", "qualitative-spatial-reasoning", "procthor", "benchmark"],
        # The first configuration is the default: what load_dataset(path) gives without a name.
        configs=[{"config_name": c, "data_files": [{"split": DATASET_SPLIT, "path": f"data/{c}/*.parquet"}],
                  **({"default": True} if c == configs[0] else {})} for c in configs],
    )
    infos = DatasetInfosDict({
        c: DatasetInfo(features=features_of_config(c), config_name=c,
                       splits={DATASET_SPLIT: {"name": DATASET_SPLIT, "num_examples": rows_by_config[c]}})
        for c in configs
    })
    infos.to_dataset_card_data(data)
    return data.to_yaml()


def dataset_card(name: str, seed: int, rooms: int, stats_by_config: dict[str, dict], examples: list[dict]) -> str:
    configs = list(stats_by_config)
    header = card_yaml(configs, {c: s["rows"] for c, s in stats_by_config.items()}, name)
    body = Template(data_text("card.md")).substitute(
        name=name, seed=seed, rooms=rooms, configs=", ".join(f"`{c}`" for c in configs), first=configs[0],
        relations=", ".join(DIRECTIONS), statistics=statistics_section(stats_by_config),
        examples=example_section(examples),
    )
    return f"---\n{header}\n---\n\n{body}"
