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
