"""bench/eval_tiny.py when the model's server dies mid-run (issue 43): llama.cpp compiled for the build
machine's AVX-512 and AMX segfaulted in decode on the first completion, and run-model went on retrying
the dead endpoint (10 prompts x 5 attempts, about 15 s of backoff each) before stopping on a broken
connection, the crash in no message. A real server process on 127.0.0.1 stands in for llama.cpp: a
`llama_cpp.server` module on PYTHONPATH that runs tests/evaluate/loopback.py's serve_then_die, which
answers three questions and dies by SIGSEGV on the fourth. The run must stop at once, saying that
the server died, how (its exit status) and what its log says last, and keep the three answers."""

import json
import sys
import time
from pathlib import Path

from conftest import SCENE_SEED
from loopback import CRASH
from tiny_model_check import load_bench

import pytest
from pipeline.dataset.build import BuildPlan, build
from pipeline.errors import RoomspaceError
from pipeline.text.configs import parse_configs

HERE = Path(__file__).resolve().parent
ANSWERS = 3  # questions the server answers before it dies
PROMPT_OF_DEATH = 20.0  # seconds the run may take to stop once it dies (retrying it took minutes)


def fake_llama_server(folder: Path) -> Path:
    """A `llama_cpp.server` package whose `python -m` is the loopback server that dies; its folder for PYTHONPATH."""
    package = folder / "llama_cpp" / "server"
    package.mkdir(parents=True)
    (folder / "llama_cpp" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(
        f"import sys\nsys.path.insert(0, {str(HERE)!r})\nfrom loopback import serve_then_die\n"
        f"serve_then_die(int(sys.argv[sys.argv.index('--port') + 1]), {ANSWERS})\n")
    return folder


def test_a_server_that_dies_stops_the_run_at_once_saying_how(scenes, tmp_path, monkeypatch):
    built = tmp_path / "roomspace-died"
    build(BuildPlan.asked(built.name, SCENE_SEED, 2, parse_configs("n3_m2_d81")), scenes, built, workers=1,
          progress=False)
    monkeypatch.setenv("PYTHONPATH", str(fake_llama_server(tmp_path / "fake")))
    model_file = tmp_path / "model.gguf"
    model_file.write_bytes(b"GGUF")
    out = tmp_path / "eval-tiny"
    started = time.monotonic()
    with pytest.raises(RoomspaceError) as stopped:
        load_bench().main([str(built), "--limit", "12", "--out", str(out), "--server-python", sys.executable,
                           "--model-file", str(model_file)])
    took = time.monotonic() - started
    said = str(stopped.value)
    assert "run-model stopped" in said and "the llama.cpp server" in said
    assert "exited on signal 11 (SIGSEGV)" in said and CRASH in said and str(out / "server.log") in said
    assert took < PROMPT_OF_DEATH, f"{took:.0f} s to stop"
    lines = (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    kept = [json.loads(line) for line in lines[1:]]
    assert "roomspace_predictions" in json.loads(lines[0])
    # what the server answered (and the proxy's replays of it, for prompts two questions share), none failed
    assert len(kept) >= ANSWERS and {p["prediction"] for p in kept} == {"The facts decide it.\nAnswer: Yes"}
    assert f"{len(kept)} answers of this run are kept" in said
