"""The harnesses' task files come from the kinds registry (pipeline/evaluate/harness/tasks.py): every
kind has tasks in every harness that can read it, the packaged folders hold exactly what the
generator writes for the configurations `make roomspace-100` builds, and nothing else.

Whether the tasks score as `roomspace score` does is for test_lm_eval, test_lmms_eval and
test_inspect, which run them on a build of every kind."""

import re
import shlex
from pathlib import Path

import pytest
import yaml

import pipeline.dataset.build
from pipeline.cli import main as roomspace
from pipeline.errors import RoomspaceError
from pipeline.evaluate.harness.tasks import (GENERATED, HARNESSES, LM_EVAL, LMMS_EVAL, PACKAGED_CONFIGS, QUESTION_TYPES,
                                             family, main, task_files, task_name, write_tasks)
from pipeline.text.configs import Config
from pipeline.text.kinds import KINDS

ROOT = Path(__file__).resolve().parents[2]


class Planned(Exception):
    def __init__(self, plan) -> None:
        self.plan = plan


def test_every_kind_is_read_by_inspect_and_by_the_harness_of_its_modality():
    """A kind added to the registry gets tasks: the text harness reads text kinds, lmms-eval image kinds."""
    for kind in KINDS.values():
        where = (f"kind {kind.name} (pipeline/text/kinds.py): every kind is read by inspect and by "
                 f"{'lmms_eval and vlmevalkit' if kind.images else 'lm_eval'} (Kind.harness, issue 29); "
                 f"it has {kind.harness}")
        assert "inspect" in kind.harness, where
        assert ("lmms_eval" if kind.images else "lm_eval") in kind.harness, where
        assert ("vlmevalkit" in kind.harness) == kind.images, where  # pipeline/evaluate/harness/vlmevalkit.py
        assert set(kind.harness) <= {"inspect", "vlmevalkit", *HARNESSES}, where
        assert kind.questions and set(kind.questions) <= set(QUESTION_TYPES), kind.name


@pytest.mark.parametrize("balanced", [False, True])
def test_every_kind_of_a_configuration_gets_a_task_per_question_type_and_a_family(balanced):
    base = Config(3, 2, 9, balanced)
    kinds = [kind for kind in KINDS.values() if kind.balanced or not balanced]
    configs = [kind.config_name(base) for kind in kinds]
    written = {}
    for harness in HARNESSES.values():
        written.update({name: (harness, text) for name, text in task_files(configs, harness).items()})
    for kind in kinds:
        config = kind.config_name(base)
        (harness,) = [h for h in HARNESSES.values() if h.name in kind.harness]
        for question_type in QUESTION_TYPES:
            name = f"{task_name(config, question_type)}.yaml"
            if question_type not in kind.questions:
                assert name not in written
                continue
            reader, text = written[name]
            assert reader is harness
            task = yaml.safe_load(text.replace("!function ", ""))
            assert task["include"] == harness.common and task["tag"] == f"roomspace_{config}"
            assert config in (task.get("dataset_name"), task.get("dataset_kwargs", {}).get("roomspace_config"))
            group = yaml.safe_load(written[f"{family(config)}_{question_type.lower()}.yaml"][1])
            assert task["task"] in group["task"]
        assert {f"{family(config)}_{q.lower()}" for q in kind.questions} == \
            set(yaml.safe_load(written[f"{family(config)}.yaml"][1])["task"])
    assert len({family(config) for config in configs}) == len(kinds)


def test_the_packaged_folders_hold_what_the_generator_writes(tmp_path):
    for harness in HARNESSES.values():
        expected = task_files(PACKAGED_CONFIGS, harness)
        on_disk = {path.name: path.read_text(encoding="utf-8") for path in harness.folder.glob("*.yaml")
                   if path.name != harness.common}
        assert on_disk == expected, ("stale task files: run `python -m pipeline.evaluate.harness.tasks --packaged`",
                                     sorted(set(on_disk) ^ set(expected)))
        assert all(text.startswith(GENERATED) for text in expected.values())


def test_the_packaged_configurations_are_what_make_roomspace_100_builds(monkeypatch):
    recipe = re.search(r"^roomspace-100:.*\n\t(.*)$", (ROOT / "Makefile").read_text(encoding="utf-8"), re.MULTILINE)
    words = shlex.split(recipe.group(1).replace("$(BIN)/roomspace", "roomspace").replace("$(SEED)", "0")
                        .replace("$(SCENES)", "scenes/").replace("$(TAG)", "").replace("$(RENDERER)", "offline"))
    assert words[:2] == ["roomspace", "build"]

    def plan_only(plan, **_):
        raise Planned(plan)

    monkeypatch.setattr(pipeline.dataset.build, "build", plan_only)
    with pytest.raises(Planned) as planned:
        roomspace(words[1:])
    assert tuple(planned.value.plan.names) == PACKAGED_CONFIGS
    assert {name for name in PACKAGED_CONFIGS if name.endswith("_balanced")}  # the balanced family is there


def test_a_folder_for_a_source_names_it_and_drops_tasks_of_configurations_no_longer_there(tmp_path):
    out = write_tasks(tmp_path / "tasks", ["n3_m2_d81", "twin_n3_m2_d81"], LM_EVAL, "/data/roomspace-x")
    assert "  roomspace_source: /data/roomspace-x\n" in (out / LM_EVAL.common).read_text(encoding="utf-8")
    assert (out / "utils.py").read_text(encoding="utf-8") == (LM_EVAL.folder / "utils.py").read_text(encoding="utf-8")
    assert (out / "roomspace_twin_n3_m2_d81_fr.yaml").exists()
    (out / "notes.yaml").write_text("mine: true\n", encoding="utf-8")
    write_tasks(out, ["n3_m2_d81"], LM_EVAL, "/data/roomspace-x")
    assert not (out / "roomspace_twin_n3_m2_d81_fr.yaml").exists() and not (out / "roomspace_twin.yaml").exists()
    assert (out / "notes.yaml").exists()  # a file the generator did not write stays

    vision = write_tasks(tmp_path / "vision", ["n3_m2_d81", "vision_n3_m2_d81"], LMMS_EVAL, "OWNER/DATA")
    assert "\ndataset_path: OWNER/DATA\n" in (vision / LMMS_EVAL.common).read_text(encoding="utf-8")
    assert sorted(path.name for path in vision.glob("roomspace_*.yaml")) == [
        "roomspace_vision.yaml", "roomspace_vision_fr.yaml", "roomspace_vision_n3_m2_d81_fr.yaml",
        "roomspace_vision_n3_m2_d81_yn.yaml", "roomspace_vision_yn.yaml"]
    with pytest.raises(RoomspaceError, match="read by lmms_eval"):
        write_tasks(tmp_path / "none", ["n3_m2_d81"], LMMS_EVAL)


def test_the_command_wants_a_source_and_a_folder_or_packaged(capsys):
    for argv in ([], ["out/x"], ["--out", "y"], ["out/x", "--out", "y", "--packaged"]):
        with pytest.raises(SystemExit):
            main(argv)
    assert "give SOURCE --out DIR, or --packaged alone" in capsys.readouterr().err
