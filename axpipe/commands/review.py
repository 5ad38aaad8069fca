"""``axpipe review round``: run a recipe's reviewers once on HEAD (DESIGN §9)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from axpipe import workspace
from axpipe.commands.receipts import parse_names
from axpipe.errors import ExitCode, InputError
from axpipe.recipe import libraries as recipes


def review_round(*, recipe: str | None, overrides: list[str], reviewers: str | None, root: str | None,
                 base: str | None, max_diff_bytes: int, as_json: bool) -> int:
    """Run one round into ``<root>/round-<n>/``; exit 0 when it completed, 1 when the attempt failed.

    The reviewers come from the ``reviewers:`` section of recipe ``recipe`` (composed with its
    overrides, as ``axpipe run`` would); ``reviewers`` picks some of them by name.
    """
    # deferred: ~27 modules and subprocess load only when this action needs them
    from axpipe.review import revisions
    from axpipe.review import round as review_round

    if recipe is None:
        raise InputError("--recipe: name the recipe whose `reviewers:` section to run, e.g. --recipe review-round")
    if max_diff_bytes < 1:
        raise InputError(f"--max-diff-bytes: {max_diff_bytes} must be at least 1")
    names = parse_names(reviewers, "--reviewers")
    # The project folder, as for `axpipe run` and `receipts verify`: in a monorepo the round's
    # receipts, its reviewers' working folder and its paths are the project's, not the top's.
    folder = revisions.project_root(Path.cwd())
    project = workspace.load_project(folder)
    recipes.find(project, recipe)  # an unknown name lists the recipes that exist
    from axpipe.recipe import (
        compose,  # composing is Hydra's work: imported only here
        resolve,
    )

    config = compose.compose_config(project, recipe, overrides)
    composed = resolve.compose(config, recipe_name=recipe, overrides=overrides, project=project,
                           starts_agents=False)  # judges without the agent: it need not be installed
    # QA units and judges end with a trace verdict, not `VERDICT:`: they run in `axpipe run`'s
    # review phase (docs/gates.md), never in a round.
    round_reviewers = [spec for spec in composed.recipe.reviewers if not spec.judge and not spec.qa]
    planned = review_round.plan(round_reviewers, names)
    receipts = composed.recipe.receipts
    chosen_root = Path(root) if root is not None else Path(receipts.root if receipts else review_round.DEFAULT_ROOT)
    if root is not None:
        chosen_root = chosen_root.resolve()
    # deferred: Hydra and the run's modules load only when this action needs them
    from axpipe.run.pipeline import sigterm_interrupts

    with sigterm_interrupts():  # SIGTERM or SIGHUP: the reviewers end with us, the attempt says so (exit 130)
        result = review_round.run_round(workspace=folder, root=chosen_root, reviewers=planned, base=base,
                                        max_diff_bytes=max_diff_bytes)
    if as_json:
        json.dump(result.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render(result.to_json()))
    return int(ExitCode.OK if result.completed else ExitCode.FAILED)


def render(result: dict[str, object]) -> str:
    """The round as a person reads it."""
    status = "completed" if result["status"] == "completed" else "FAILED (kept as an attempt, not a round)"
    revision = str(result["revision"])[:12]
    lines = [f"Review round {result['round']} of {revision}: {status}", f"  folder: {result['folder']}"]
    for reviewer in result["reviewers"]:  # type: ignore[attr-defined]
        mark = "ok" if reviewer["status"] == "passed" else "FAIL"
        lines.append(f"  [{mark:>4}] {reviewer['name']}: {reviewer['reason']}")
    lines.extend(f"  [FAIL] {problem}" for problem in result["problems"])  # type: ignore[attr-defined]
    return "\n".join(lines) + "\n"
