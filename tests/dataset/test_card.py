"""The dataset card as the Hub reads it: its YAML header parsed by huggingface_hub, on small real builds."""

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import datasets
import pytest
from conftest import SCENE_SEED
from huggingface_hub import DatasetCard

from pipeline.dataset.build import BuildPlan, build, room_job
from pipeline.dataset.card import config_size, size_category, statistics_section, task_categories
from pipeline.dataset.manifest import Stats, read_manifest, shard_files, write_manifest
from pipeline.evaluate.rows import open_rows
from pipeline.typed_json import from_json, to_json
from pipeline.spatial.relations import DIRECTIONS
from pipeline.text.agents import FRAMINGS
from pipeline.text.configs import parse_configs
from pipeline.text.kinds import kind_of

BASE = "n3_m2_d81"


def built_card(scenes: Path, out: Path, vision: bool) -> tuple[Path, DatasetCard]:
    plan = BuildPlan.asked("roomspace-card", SCENE_SEED, 2, parse_configs(BASE),
                           {"vision": parse_configs(BASE)} if vision else {})
    build(plan, scenes, out, workers=1, progress=False)
    return out, DatasetCard.load(out / "README.md")


@pytest.fixture(scope="module")
def with_vision(scenes, tmp_path_factory) -> tuple[Path, DatasetCard]:
    return built_card(scenes, tmp_path_factory.mktemp("card") / "roomspace-card", vision=True)


@pytest.fixture(scope="module")
def text_only(scenes, tmp_path_factory) -> tuple[Path, DatasetCard]:
    return built_card(scenes, tmp_path_factory.mktemp("card-text") / "roomspace-card", vision=False)


def infos(card: DatasetCard) -> dict[str, dict]:
    info = card.data.dataset_info
    return {entry["config_name"]: entry for entry in (info if isinstance(info, list) else [info])}


def parquet_bytes(out: Path, config: str) -> int:
    return sum(path.stat().st_size for path in shard_files(out, read_manifest(out), config))


def test_the_header_says_what_hub_search_reads(with_vision):
    _, card = with_vision
    data = card.data
    assert data.pretty_name == "roomspace-card"
    assert data.license == "apache-2.0" and data.language == ["en"]
    assert data.annotations_creators == ["machine-generated"]
    assert data.language_creators == ["machine-generated"]
    assert data.source_datasets == ["original"]  # the build's houses come from ProcTHOR's generator
    assert data.task_categories == ["question-answering", "visual-question-answering"]


def test_the_size_category_is_the_bucket_of_all_rows(with_vision, tmp_path):
    out, card = with_vision
    rows = sum(split["num_examples"] for entry in infos(card).values() for split in entry["splits"])
    assert rows == sum(datasets.load_dataset(str(out), c, split="test", cache_dir=str(tmp_path)).num_rows
                      for c in infos(card))
    assert card.data.size_categories == [size_category(rows)]


def test_each_configuration_declares_its_real_sizes(with_vision):
    out, card = with_vision
    declared = infos(card)
    assert sorted(declared) == sorted([BASE, f"vision_{BASE}"])
    for config, entry in declared.items():
        (split,) = entry["splits"]
        assert entry["download_size"] == parquet_bytes(out, config) > 0
        assert entry["dataset_size"] == split["num_bytes"] > 0
    # Images make the vision configuration the larger one, in Arrow as on disk.
    assert declared[f"vision_{BASE}"]["dataset_size"] > declared[BASE]["dataset_size"]


def test_the_declared_sizes_are_those_datasets_reports(with_vision, tmp_path):
    out, card = with_vision
    for config, entry in infos(card).items():
        loaded = datasets.load_dataset(str(out), config, split="test", cache_dir=str(tmp_path))
        assert loaded.info.splits["test"].num_bytes == entry["dataset_size"]
        assert loaded.info.download_size == entry["download_size"]


def test_the_sizes_taken_as_each_shard_is_written_are_those_its_files_give(every_kind, tmp_path, monkeypatch):
    """The build takes each file's sizes as its shard is written (pipeline.dataset.build.write_shard), not
    after its workers: a file of one configuration's rows counted in the table written (card.written_size),
    a shared one (pipeline.dataset.layout) read back. Its card, of every kind (a file each: one shard), is
    the one the finished build's files give, every one of them read at the end by card.file_size, as
    `datasets` reads them (a build finished again reads the files no run of it measured)."""
    import pipeline.dataset.card
    built, scenes = every_kind
    out = tmp_path / built.name
    shutil.copytree(built, out)
    (out / "README.md").unlink()
    manifest = read_manifest(out)
    write_manifest(out, {**manifest, "complete": False})
    read, file_size = [], pipeline.dataset.card.file_size
    monkeypatch.setattr(pipeline.dataset.card, "file_size",
                        lambda path, config: read.append((path, config)) or file_size(path, config))
    build(BuildPlan.from_identity(manifest["identity"], out.name), scenes, out, workers=1, progress=False)
    names = manifest["identity"]["configs"]
    assert sorted(read) == sorted((path, config) for config in names for path in shard_files(out, manifest, config))
    assert {kind_of(config).shared_images for config in names} == {True, False}
    assert (out / "README.md").read_text(encoding="utf-8") == (built / "README.md").read_text(encoding="utf-8")


def test_a_build_without_vision_asks_no_visual_questions(text_only):
    out, card = text_only
    assert card.data.task_categories == ["question-answering"]
    entry = infos(card)[BASE]
    assert entry["download_size"] == parquet_bytes(out, BASE)
    assert entry["dataset_size"] == config_size(sorted((out / "data" / BASE).glob("*.parquet"))).arrow


def test_the_card_links_the_semantics_the_sources_and_both_citations(with_vision):
    _, card = with_vision
    text = card.text
    assert "docs/semantics.md" in text
    assert "https://github.com/Fangjun-Li/RoomSpace" in text
    assert "https://huggingface.co/datasets/Fangjun/RoomSpace" in text
    assert "@inproceedings{li2024reframing" in text and "@inproceedings{procthor" in text
    assert "## Compared with the published RoomSpace" in text and "## Sources and licences" in text


@pytest.mark.parametrize(("rows", "bucket"), [
    (0, "n<1K"), (999, "n<1K"), (1_000, "1K<n<10K"), (9_999, "1K<n<10K"), (10_000, "10K<n<100K"),
    (340_000, "100K<n<1M"), (10 ** 6, "1M<n<10M"), (10 ** 12 - 1, "100B<n<1T"), (10 ** 12, "n>1T"),
])
def test_size_buckets(rows, bucket):
    assert size_category(rows) == bucket


def test_task_categories_follow_the_build():
    assert task_categories(["n5_m4_d144", "twin_n5_m4_d144"]) == ["question-answering"]
    assert task_categories(["n5_m4_d144", "vision_n5_m4_d144"])[-1] == "visual-question-answering"


def test_the_vision_statistics_count_pair_questions_per_view_and_answer(with_vision):
    out, card = with_vision
    rows = open_rows(out)
    pairs = [r for r in rows.rows([f"vision_{BASE}"], ["view", "question_type", "answer", "modality", "room_id",
                                                          "true_relation"]) if r["modality"] == "image"]
    assert pairs
    rooms = len({r["room_id"] for r in pairs})
    images = len({r["image_id"] for r in rows.rows([f"vision_{BASE}"], ["image_id"])})
    assert f"questions, about {images} images (each stored once)" in card.text
    assert f"pair questions (each asked as image, text, image+text): rooms with any: {rooms} of 2;" in card.text
    for view, image in (("top_down", "top_down"), ("north_facing", "south_door")):
        asked = Counter((r["question_type"], r["answer"]) for r in pairs if r["view"] == view)
        fr = sum(n for (kind, _), n in asked.items() if kind == "FR")
        answers = Counter(r["true_relation"] for r in pairs if r["view"] == view and r["question_type"] == "FR")
        shown = ", ".join(f"{code}: {answers[code]}" for code in DIRECTIONS if code in answers)
        assert (f"- pair questions, {image} image: {fr} FR, {asked['YN', 'Yes'] + asked['YN', 'No']} YN "
                f"({asked['YN', 'Yes']} Yes, {asked['YN', 'No']} No); FR answers: {shown}") in card.text


def test_each_kind_counts_its_own_sections(with_vision, scenes):
    out, _ = with_vision
    (entry,) = read_manifest(out)["shards"].values()
    base, vision = entry.stats[BASE], entry.stats[f"vision_{BASE}"]
    assert (base.images, base.pair_questions, base.agent_kinds) == (None, None, None)
    asked = open_rows(out).rows([f"vision_{BASE}"], ["room_id", "image_name"])
    images = {(r["room_id"], r["image_name"]) for r in asked}
    assert vision.images == len(images)
    assert set(vision.pair_questions) == {"top_down", "south_door"} and vision.agent_kinds is None
    plan = BuildPlan.asked("stats", SCENE_SEED, 1, parse_configs(BASE), {"agent": parse_configs(BASE)})
    agent = room_job(SCENE_SEED, 0, scenes, plan.outputs).stats[f"agent_{BASE}"]
    assert agent.pair_questions is None and agent.images is None
    assert sum(asked.FR + asked.Yes + asked.No for asked in agent.agent_kinds.values()) == agent.rows


def test_map_configurations_count_their_maps_not_yn_or_fr_questions(scenes):
    configs = parse_configs(BASE)
    plan = BuildPlan.asked("stats", SCENE_SEED, 2, configs, {"agent": configs, "map": configs})
    results = [room_job(SCENE_SEED, index, scenes, plan.outputs) for index in range(2)]
    counted = {name: sum((result.stats[name] for result in results), Stats()) for name in plan.names}
    shown = statistics_section(counted)
    for name, drawn in ((f"map_{BASE}", 3), (f"agent_map_{BASE}", 4)):  # the egocentric map draws the observer too
        stats, rows = counted[name], [row for result in results for row in result.table(name).to_pylist()]
        assert (stats.settings, stats.hops, stats.topology, stats.agent_kinds) == ({}, {}, {}, None)
        assert {setting: m.maps for setting, m in stats.maps.items()} == Counter(row["setting"] for row in rows)
        assert sum(m.facts for m in stats.maps.values()) == sum(len(row["facts"]) for row in rows)
        assert sum(m.pair_facts for m in stats.maps.values()) == sum(f["object"] is not None for row in rows
                                                                     for f in row["facts"])
        assert {m.objects / m.maps for m in stats.maps.values()} == {drawn}
        assert from_json(Stats, to_json(stats)) == stats
        section = shown.split(f"### {name}\n")[1].split("### ")[0]
        assert "YN balance" not in section and "| setting | maps | mean facts stated |" in section
        assert f"| layout | {stats.maps['layout'].maps} | " in section
    assert counted[BASE].maps is None and "| setting | rows | YN Yes |" in shown.split(f"### {BASE}\n")[1]


def test_statistics_add_up_in_any_grouping_and_round_trip_through_json(scenes):
    plan = BuildPlan.asked("stats", SCENE_SEED, 4, parse_configs(BASE), {"agent": parse_configs(BASE)})
    rooms = [room_job(SCENE_SEED, index, scenes, plan.outputs).stats for index in range(4)]
    for name in plan.names:
        a, b, c, d = (room[name] for room in rooms)
        before = [to_json(s) for s in (a, b, c, d)]
        together = sum((a, b, c, d), Stats())
        assert to_json(together) == to_json((a + b) + (c + d)) == to_json(d + (c + (b + a)))
        assert together.rooms + together.skipped_rooms == 4 and together.rows == sum(s.rows for s in (a, b, c, d))
        assert from_json(Stats, to_json(together)) == together
        assert [to_json(s) for s in (a, b, c, d)] == before  # adding makes new records: the rooms' are unchanged
        # adding them up at once: the same sums, every mapping's keys in the same order
        assert json.dumps(to_json(Stats.total([a, b, c, d]))) == json.dumps(to_json(together))
        assert [to_json(s) for s in (a, b, c, d)] == before


@pytest.fixture(scope="module")
def counted(scenes) -> dict[str, Stats]:
    """Two rooms' statistics of the base, vision, agent and vision_agent configurations, counted as a build counts them."""
    configs = parse_configs(BASE)
    plan = BuildPlan.asked("stats", SCENE_SEED, 2, configs, {"vision": configs, "agent": configs})
    rooms = [room_job(SCENE_SEED, index, scenes, plan.outputs).stats for index in range(2)]
    return {name: sum((room[name] for room in rooms), Stats()) for name in plan.names}


def test_the_statistics_read_the_same_however_the_counts_were_kept(counted):
    """A resumed build reads its first shards' statistics back from manifest.json (keys sorted) and
    counts the rest afresh (keys as first seen): the card must not tell the two apart."""
    reread = {name: from_json(Stats, json.loads(json.dumps(to_json(stats), sort_keys=True)))
              for name, stats in counted.items()}
    assert [list(s.pair_questions or ()) + list(s.agent_kinds or ()) for s in counted.values()] != \
           [list(s.pair_questions or ()) + list(s.agent_kinds or ()) for s in reread.values()]  # the orders differ
    assert statistics_section(counted) == statistics_section(reread)
    shown = statistics_section(counted)
    assert shown.index("pair questions, top_down image") < shown.index("pair questions, south_door image")
    assert [line.split(" |")[0] for line in shown.splitlines() if line.startswith("| ") and " | " in line
            and line.split(" |")[0][2:] in FRAMINGS] == [f"| {k}" for k in FRAMINGS] * 2


def test_the_statistics_lines_read_as_english(counted):
    shown = statistics_section(counted)
    agent = shown[shown.index(f"### agent_{BASE}"):shown.index(f"### vision_agent_{BASE}")]
    assert "- question hops (per room): none\n" in agent  # agent rows count no hops: no empty line
    assert "(per room): \n" not in shown and "1 hops" not in shown and "1 changes" not in shown
    angles = re.findall(r"(\d+) changes?, (\d+) degrees: \d+", agent)
    assert ("1", "90") in angles and "1 change, 90 degrees: " in agent
    assert angles == sorted(angles, key=lambda pair: tuple(map(int, pair)))  # 90 degrees before 180


def test_the_card_carries_the_shortcut_audit_of_every_configuration(scenes, tmp_path, monkeypatch):
    """The audit section: the blind baselines' table (pipeline.dataset.audit), a line per configuration
    and setting, the same as files_audit gives on the build's files, and which family to compare on.
    The build's two workers audit its configurations in two processes: the same table as one, whichever
    configurations each process takes. Rooms beyond those audited are not read: their shard is passed over."""
    import pipeline.dataset.audit
    from pipeline.dataset.audit import audit_table, files_audit
    from pipeline.dataset.card import CARD_LEAST_ROOMS, CARD_ROOMS

    out = tmp_path / "roomspace-audit"
    plan = BuildPlan.asked("roomspace-audit", SCENE_SEED, CARD_LEAST_ROOMS, parse_configs(f"{BASE},{BASE}_balanced"),
                           shard_rooms=CARD_LEAST_ROOMS // 2)
    build(plan, scenes, out, workers=2, progress=False)
    card = (out / "README.md").read_text(encoding="utf-8")
    section = card.split("## Shortcut audit", 1)[1].split("## Examples", 1)[0]
    files = {config: sorted((out / "data" / config).glob("test-*.parquet")) for config in (BASE, f"{BASE}_balanced")}
    assert audit_table(files_audit(files, None, range(CARD_ROOMS))) in section
    assert "Compare models on the balanced configurations" in section
    assert {line.split(" | ")[0].strip("| ") for line in section.splitlines() if line.startswith(f"| {BASE}")} == \
        {BASE, f"{BASE}_balanced"}

    three = {**files, "first shard": files[BASE][:1]}  # three tasks, of unlike sizes, for two processes
    assert files_audit(three, None, range(CARD_ROOMS), workers=2) == files_audit(three, None, range(CARD_ROOMS))
    read, questions = [], pipeline.dataset.audit.questions
    monkeypatch.setattr(pipeline.dataset.audit, "questions", lambda shard, *args, **kwargs: read.append(
        kwargs["where"]) or questions(shard, *args, **kwargs))
    first_rooms = range(CARD_LEAST_ROOMS // 2)
    assert files_audit(files, None, first_rooms) == files_audit({c: p[:1] for c, p in files.items()}, None)
    assert read == [str(files[BASE][0]), str(files[f"{BASE}_balanced"][0])] * 2


def test_a_build_too_small_to_audit_says_so(text_only):
    out, _ = text_only
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "Not measured for a build of 2 test rooms: the blind baselines need 8 or more" in card


def test_each_setting_counts_its_questions_by_level(with_vision):
    out, card = with_vision
    source = open_rows(out)
    for config in source.configs:
        rows = list(source.rows([config]))
        for setting in {row["setting"] for row in rows}:
            levels = Counter(row["level"] for row in rows if row["setting"] == setting and row["level"] is not None)
            shown = ", ".join(f"{level}: {levels[level]}" for level in sorted(levels)) or "none"
            table = card.text[card.text.index(f"### {config}\n"):]
            line = next(line for line in table.splitlines() if line.startswith(f"| {setting} |"))
            assert line.endswith(f"| {shown} |"), (config, setting, line)
