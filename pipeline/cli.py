"""The `roomspace` command: one subcommand per job, each a thin call into its stage module."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pipeline.errors import RoomspaceError


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def cmd_scenes(args: argparse.Namespace) -> None:
    from pipeline.scenes import sample_scenes

    sample_scenes(
        count=args.count,
        seed=args.seed,
        out=args.out,
        controller=args.controller,
        source=args.source,
        force=args.force,
        progress=not args.quiet,
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="roomspace", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    scenes = commands.add_parser("scenes", help="sample seeded ProcTHOR single-room houses")
    scenes.add_argument("--count", type=positive_int, required=True, help="number of houses")
    scenes.add_argument("--seed", type=int, default=0, help="global seed S; house k depends on (S, k) only")
    scenes.add_argument("--out", type=Path, default=Path("scenes"), help="folder for the scene files")
    scenes.add_argument("--controller", choices=["offline", "ai2thor"], default="offline",
                        help="offline: pre-physics stages only (default); ai2thor: a real Unity build")
    scenes.add_argument("--source", choices=["procthor", "procthor-10k"], default="procthor",
                        help="procthor: sample new houses (default); procthor-10k: the published set, via prior")
    scenes.add_argument("--force", action="store_true", help="resample scenes already on disk")
    scenes.add_argument("--quiet", action="store_true", help="no progress bar")
    scenes.set_defaults(run=cmd_scenes)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.run(args)
    except (RoomspaceError, OSError) as error:
        print(f"roomspace {args.command}: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"roomspace {args.command}: interrupted; re-run the same command to finish", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
