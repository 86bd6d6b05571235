"""The `roomspace` command line: one parser function per command, and arguments refused in one line."""

import pytest

from pipeline.cli import build_parser, main

READERS = ["prompts", "score", "export", "run-model"]  # the commands that read a build named by SOURCE
RUN_MODEL = ["--base-url", "http://127.0.0.1:9", "--model", "m", "--out", "p.jsonl"]


@pytest.mark.parametrize("command", READERS)
def test_the_build_a_command_reads_is_its_source(command, capsys):
    extra = RUN_MODEL if command == "run-model" else []
    args = build_parser().parse_args([command, "out/NAME", *extra])
    assert args.source == "out/NAME" and not hasattr(args, "out")
    with pytest.raises(SystemExit):
        main([command, "--help"])
    usage = capsys.readouterr().out
    assert " SOURCE" in usage and "\n  out " not in usage


@pytest.mark.parametrize("command", ["validate", "push"])
def test_a_folder_a_command_checks_or_publishes_keeps_its_name(command):
    extra = ["--repo", "o/n"] if command == "push" else []
    assert str(build_parser().parse_args([command, "out/NAME", *extra]).out) == "out/NAME"


def refused(argv: list[str], capsys) -> str:
    """The error line of a command line argparse refuses (exit status 2, before anything is read)."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize("option, value, expected", [
    ("--base-url", "notaurl", "argument --base-url: expected a URL with scheme http or https and a host"),
    ("--base-url", "ftp://host/v1", "argument --base-url: expected a URL with scheme http or https and a host"),
    ("--base-url", "http:///v1", "argument --base-url: expected a URL with scheme http or https and a host"),
    ("--base-url", "http://host:port/v1", "argument --base-url: expected a URL with scheme http or https and a host"),
    ("--timeout", "-1", "argument --timeout: expected a number of seconds above 0"),
    ("--timeout", "0", "argument --timeout: expected a number of seconds above 0"),
    ("--timeout", "inf", "argument --timeout: expected a number of seconds above 0"),
    ("--timeout", "soon", "argument --timeout: expected a number of seconds above 0"),
    ("--temperature", "nan", "argument --temperature: expected a finite number at least 0"),
    ("--temperature", "-0.5", "argument --temperature: expected a finite number at least 0"),
    ("--temperature", "inf", "argument --temperature: expected a finite number at least 0"),
    ("--model", "", "argument --model: expected a non-empty name"),
    ("--model", "  ", "argument --model: expected a non-empty name"),
])
def test_run_model_refuses_a_bad_endpoint_setting_in_one_line(option, value, expected, tmp_path, capsys):
    argv = ["run-model", str(tmp_path / "not-read"), *RUN_MODEL, option, value]
    line = refused(argv, capsys)
    assert line.startswith(f"roomspace run-model: error: {expected}") and repr(value) in line


def test_run_model_takes_the_usual_endpoint_settings():
    args = build_parser().parse_args(["run-model", "out/NAME", "--base-url", "https://api.example.com/v1",
                                      "--model", "org/model:7b", "--out", "p.jsonl", "--timeout", "0.5",
                                      "--temperature", "0"])
    assert (args.base_url, args.model, args.timeout, args.temperature) == ("https://api.example.com/v1",
                                                                           "org/model:7b", 0.5, 0.0)


def test_score_refuses_an_empty_system_name(capsys):
    line = refused(["score", "out/NAME", "--predictions", "p.jsonl", "--name", ""], capsys)
    assert line.startswith("roomspace score: error: argument --name: expected a non-empty name")


def test_version(capsys):
    from pipeline import __version__

    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0 and capsys.readouterr().out.strip() == f"roomspace {__version__}"


def test_scenes_prints_one_summary_line(tmp_path, capsys, monkeypatch):
    import pipeline.scene.scene_folder

    monkeypatch.setattr(pipeline.scene.scene_folder, "sample_scenes", lambda count, **_: 2)
    assert main(["scenes", "--count", "5", "--seed", "3", "--out", str(tmp_path), "--quiet"]) == 0
    assert capsys.readouterr().out == f"{tmp_path}: 5 scenes of seed 3: 2 sampled now, 3 already there and kept\n"
