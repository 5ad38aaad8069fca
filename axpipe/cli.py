"""The ``axpipe`` command: one front parser, one module per subcommand.

``axpipe run ...`` goes to Hydra before argparse sees it (Hydra owns that command line);
every other subcommand is plain argparse and never imports Hydra, so it starts fast.
Each subcommand is a function in :mod:`axpipe.commands` that returns an exit code; errors
are turned into messages and exit codes once, by :func:`axpipe.error_handler.guarded`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from axpipe import __version__

_DESCRIPTION = """\
axpipe runs unattended engineering work that you can trust afterwards:
recipes composed by Hydra, checks that leave receipts, gates narrowed to a change.
The agent is told; the code checks."""

_EPILOG = """\
exit codes: 0 success, 1 failure, 2 input or config error, 3 blocked,
4 budget limited, 5 environment not ready, 6 not terminal, 7 checkout locked,
124 idle timeout, 130 interrupted.
Run `axpipe COMMAND --help` for a command's options; `axpipe run --help` shows Hydra's."""


def build_parser() -> argparse.ArgumentParser:
    """The front parser with every subcommand (``run`` is listed; Hydra parses its arguments)."""
    parser = argparse.ArgumentParser(
        prog="axpipe", description=_DESCRIPTION, epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"axpipe {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    commands.add_parser(
        "run", help="compose a recipe with Hydra and run it (recipe=NAME [overrides] [-m] [--cfg job])",
        add_help=False,
    )

    recipes = commands.add_parser("recipes", help="list recipes on the search path, or show one composed")
    recipes_commands = recipes.add_subparsers(dest="action", metavar="ACTION", required=True)
    recipes_list = recipes_commands.add_parser("list", help="every recipe with its description and source")
    recipes_list.add_argument("--json", action="store_true", help="print a JSON list")
    recipes_show = recipes_commands.add_parser("show", help="print a recipe's composed YAML")
    recipes_show.add_argument("name", help="recipe name (as in recipe=NAME)")
    recipes_show.add_argument("overrides", nargs="*", help="Hydra overrides to apply, KEY=VALUE")
    recipes_show.add_argument("--resolve", action="store_true", help="resolve ${...} interpolations")

    plugins = commands.add_parser("plugins", help="list installed plugins per namespace")
    plugins_commands = plugins.add_subparsers(dest="action", metavar="ACTION", required=True)
    plugins_list = plugins_commands.add_parser("list", help="every plugin with its distribution and load error")
    plugins_list.add_argument("--json", action="store_true", help="print a JSON list")
    plugins_list.add_argument("--namespace", help="only this namespace, e.g. axpipe.checks")
    _add_review_commands(commands)
    return parser


def _add_review_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    review = commands.add_parser("review", help="run a review round with a recipe's reviewers")
    review_commands = review.add_subparsers(dest="action", metavar="ACTION", required=True)
    review_round = review_commands.add_parser(
        "round", help="run every reviewer once on HEAD into ROOT/round-<n>/",
        description="Run the reviewers of a recipe's `reviewers:` section once on HEAD. A round where every "
                    "reviewer exits 0 with one final verdict becomes ROOT/round-<n>/; otherwise the attempt "
                    "stays under ROOT/attempts/ and the exit code is 1.")
    review_round.add_argument("overrides", nargs="*", help="Hydra overrides for the recipe, KEY=VALUE")
    review_round.add_argument("--recipe", metavar="NAME", help="recipe whose reviewers to run (required)")
    review_round.add_argument("--reviewers", metavar="A,B", help="only these reviewers, by name")
    review_round.add_argument("--root", metavar="DIR",
                              help="receipts folder (default: the recipe's receipts.root, else .axpipe/review)")
    review_round.add_argument("--base", metavar="REV",
                              help="diff base (default: the first round's base, else HEAD's parent)")
    review_round.add_argument("--max-diff-bytes", type=int, default=4 * 1024 * 1024, metavar="N",
                              help="refuse a diff larger than this (default 4 MiB)")
    review_round.add_argument("--json", action="store_true", help="print the round as JSON")

    receipts = commands.add_parser("receipts", help="verify review receipts")
    receipts_commands = receipts.add_subparsers(dest="action", metavar="ACTION", required=True)
    verify = receipts_commands.add_parser(
        "verify", help="check review rounds, verdicts, dispositions and regression tests",
        description="Verify CLI-review receipts: exit 0 when there is no problem, 1 listing every problem "
                    "with its round, reviewer and finding, 2 for bad input.")
    verify.add_argument("--root", metavar="DIR", required=True, help="folder holding round-<n>/ folders")
    verify.add_argument("--reviewers", metavar="A,B,C",
                        help="required reviewers (default: every reviewer folder of the final round)")
    verify.add_argument("--test-dir", default="tests", metavar="DIR",
                        help="folder regression tests must live in (default: tests)")
    verify.add_argument("--test-adapter", metavar="NAME",
                        help="test adapter for every regression (default: chosen by file suffix)")
    verify.add_argument("--timeout", default="10m", metavar="DURATION",
                        help="kill a regression test run after this long (default: 10m)")
    verify.add_argument("--json", action="store_true", help="print the verification as JSON")


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "recipes":
        from axpipe.commands import recipes

        if args.action == "list":
            return recipes.list_recipes(as_json=args.json)
        return recipes.show_recipe(name=args.name, overrides=args.overrides, resolve=args.resolve)
    if args.command == "plugins":
        from axpipe.commands import plugins

        return plugins.list_plugins(as_json=args.json, namespace=args.namespace)
    if args.command == "review":
        from axpipe.commands import review

        return review.review_round(recipe=args.recipe, overrides=args.overrides, reviewers=args.reviewers,
                                   root=args.root, base=args.base, max_diff_bytes=args.max_diff_bytes,
                                   as_json=args.json)
    if args.command == "receipts":
        from axpipe.commands import receipts

        return receipts.verify_receipts(root=args.root, reviewers=args.reviewers, test_dir=args.test_dir,
                                        test_adapter=args.test_adapter, timeout=args.timeout, as_json=args.json)
    raise AssertionError(f"unhandled command {args.command}")  # argparse only accepts known ones


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``axpipe`` console script; returns the exit code."""
    from axpipe.error_handler import guarded

    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments and arguments[0] == "run":
        from axpipe import hydra_app

        return guarded(lambda: hydra_app.main(arguments[1:]))
    parser = build_parser()
    try:
        args = parser.parse_args(arguments)
    except SystemExit as stop:  # --help, --version, usage errors (exit 2)
        return int(stop.code or 0) if isinstance(stop.code, int) or stop.code is None else 2
    return guarded(lambda: _dispatch(args))


if __name__ == "__main__":
    sys.exit(main())
