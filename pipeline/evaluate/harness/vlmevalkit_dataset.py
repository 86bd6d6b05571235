"""RoomSpace's VLMEvalKit dataset class: a configuration with images as VLMEvalKit runs image benchmarks.

Imports VLMEvalKit (`pip install ms-vlmeval`, written against 0.0.20), so it loads only where that is
installed; the TSVs it reads and its scoring are pipeline.evaluate.harness.vlmevalkit's, which need no
VLMEvalKit. Used as VLMEvalKit's own run.py uses a dataset:

    from vlmeval.api import OpenAIWrapper
    from vlmeval.inference import infer_data_job
    dataset = RoomSpaceDataset("RoomSpace_vision_n5_m4_d144")  # $LMUData/RoomSpace_vision_n5_m4_d144.tsv
    model = OpenAIWrapper(model=NAME, api_base="http://HOST/v1/chat/completions", key=KEY, temperature=0)
    infer_data_job(model, work_dir=DIR, model_name=NAME, dataset=dataset)
    dataset.evaluate(f"{DIR}/{NAME}_RoomSpace_vision_n5_m4_d144.xlsx")  # yn_accuracy, fr_exact, items

A question asked without its image (modality `text`: a pair question with the centres in words) has
an empty image in the TSV. ImageBaseDataset resolves every image it is given, and this release
cannot hold an empty one, so the class lets it load the questions with images (skip_noimg) and puts
the others back, in the file's order, in `post_build`; `build_prompt` sends those as text alone.
"""

from __future__ import annotations

import os.path as osp

import pandas as pd
from vlmeval.dataset.image_base import ImageBaseDataset
from vlmeval.smp import LMUDataRoot, dump, get_intermediate_file_path, load

from pipeline.errors import RoomspaceError
from pipeline.evaluate.harness.vlmevalkit import DATASETS, config_of, score_records


class RoomSpaceDataset(ImageBaseDataset):
    TYPE = "VQA"  # an open answer, read by the project's parser
    MODALITY = "IMAGE"
    DATASET_URL = {name: "" for name in DATASETS}  # written locally (write_tsvs), never downloaded
    DATASET_MD5 = {}

    def __init__(self, dataset: str = DATASETS[0], skip_noimg: bool = True) -> None:
        self.config = config_of(dataset)
        super().__init__(dataset, skip_noimg=True)

    def load_data(self, dataset: str) -> pd.DataFrame:
        path = osp.join(LMUDataRoot(), f"{dataset}.tsv")
        if not osp.exists(path):
            raise RoomspaceError(f"{path} is missing: write it with `python -m pipeline.evaluate.harness.vlmevalkit "
                                 f"SOURCE --out {LMUDataRoot()}` (LMUData names the folder)")
        self.data_path = path
        self.questions = load(path)  # every question; ImageBaseDataset keeps those with images
        return self.questions.copy()

    def post_build(self, dataset: str) -> None:
        imageless = self.questions[pd.isna(self.questions["image"])]
        data = pd.concat([self.data, imageless])
        data["index"] = [int(x) for x in data["index"]]
        self.data = data.sort_values("index", kind="stable").reset_index(drop=True)

    def build_prompt(self, line) -> list[dict]:
        """The question's image (a file VLMEvalKit writes from the TSV), then its prompt as it is."""
        if isinstance(line, int):
            line = self.data.iloc[line]
        text = [dict(type="text", value=line["question"])]
        if pd.isna(line["image"]):
            return text
        return [dict(type="image", value=path) for path in self.dump_image(line)] + text

    def evaluate(self, eval_file: str, **judge_kwargs) -> dict[str, float]:
        """The prediction file's scores as `roomspace score` gives them (pipeline.evaluate.harness.vlmevalkit),
        also written beside it (<prediction file>_acc.csv)."""
        scores = score_records(load(eval_file).to_dict("records"))
        dump(pd.DataFrame([scores]), get_intermediate_file_path(eval_file, "_acc"))
        return scores
