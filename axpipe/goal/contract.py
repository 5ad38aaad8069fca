"""The frozen contract of an assured goal (DESIGN §3, §4).

The contract is the canonical JSON of the goal's objective, acceptance, sources, source
paths and checks, with ``{BASELINE}`` replaced by the HEAD SHA at plan time, and its
SHA-256 digest. Receipts carry the digest; a receipt made under another digest can never
satisfy the goal.

Held-out checks are in the contract only as their id, acceptance and the digest of their
full description: the digest still changes when a held-out check is edited, but nothing an
agent can read (``.axpipe/goals/<id>/contract.json``, the store) holds their command,
purpose or output. The full descriptions live in the private folder (:mod:`axpipe.goal.private`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

from axpipe import git
from axpipe.errors import AxpipeError, ExitCode
from axpipe.recipe import schema

BASELINE = "{BASELINE}"


class ContractMismatch(AxpipeError):
    """The recipe's frozen requirements changed under an existing goal."""

    exit_code = ExitCode.INPUT_ERROR

    def __init__(self, goal_id: str, old: str, new: str, differences: list[str], *, revisable: bool = True) -> None:
        self.differences = differences
        listed = "\n".join(f"  - {difference}" for difference in differences)
        # `goal revise` refuses complete goals and unassured recipes: never advise it then.
        revise = (f", or revise it: axpipe goal revise --goal {goal_id} \"<correction>\" "
                  "(a new contract linked to the old one; old receipts cannot satisfy it)") if revisable else ""
        super().__init__(
            f"contract mismatch: the frozen requirements of goal '{goal_id}' changed "
            f"(frozen {old[:12]}, recipe now {new[:12]}):\n{listed}\n"
            f"Clear the goal and run again to start over (axpipe goal clear --goal {goal_id}){revise}."
        )


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 text: the form digests are taken over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest_of(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def head_sha(root: Path) -> str | None:
    """The workspace's HEAD commit, or None outside git or before the first commit."""
    return git.resolve_commit(root, "HEAD")


def _params_dict(params: Any) -> Any:
    if dataclasses.is_dataclass(params) and not isinstance(params, type):
        return dataclasses.asdict(params)
    return params


def _substitute(value: Any, baseline: str | None) -> Any:
    if isinstance(value, str):
        return value.replace(BASELINE, baseline) if baseline is not None else value
    if isinstance(value, list):
        return [_substitute(item, baseline) for item in value]
    if isinstance(value, dict):
        return {key: _substitute(item, baseline) for key, item in value.items()}
    return value


def uses_baseline(goal: schema.Goal) -> bool:
    """Whether any check mentions ``{BASELINE}`` (then the workspace needs a HEAD)."""
    return BASELINE in canonical_json([check_description(check, None) for check in goal.checks])


def check_description(check: schema.CheckSpec, baseline: str | None) -> dict[str, Any]:
    """A check's full frozen description (command, params, purpose, environment, ...)."""
    description: dict[str, Any] = _substitute({
        "id": check.id, "kind": check.kind, "acceptance": list(check.acceptance),
        "command": check.command, "params": _params_dict(check.params), "purpose": check.purpose,
        "environment": check.environment, "timeout": check.timeout, "held_out": check.held_out,
    }, baseline)
    return description


def build(goal: schema.Goal, baseline: str | None) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The canonical contract and the full descriptions of its held-out checks (by id)."""
    checks: list[dict[str, Any]] = []
    held_out: dict[str, dict[str, Any]] = {}
    for check in goal.checks:
        description = check_description(check, baseline)
        if check.held_out:
            held_out[check.id] = description
            checks.append({"id": check.id, "held_out": True, "acceptance": list(check.acceptance),
                           "sha256": digest_of(description)})
        else:
            checks.append(description)
    canonical = {
        "version": 1,
        "objective": goal.objective,
        "acceptance": {key: {"tag": item.tag, "text": item.text, "check": item.check}
                       for key, item in goal.acceptance.items()},
        "sources": [{"role": source.role, "reference": source.reference} for source in goal.sources],
        "source_paths": list(goal.source_paths),
        "checks": checks,
        "baseline": baseline,
    }
    return canonical, held_out


def differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What changed between two canonical contracts, in words."""
    found = []
    for key in ("objective", "acceptance", "sources", "source_paths"):
        if old.get(key) != new.get(key):
            found.append(f"{key} changed")
    old_checks = {check["id"]: check for check in old.get("checks", [])}
    new_checks = {check["id"]: check for check in new.get("checks", [])}
    for check_id in sorted(set(old_checks) - set(new_checks)):
        found.append(f"check {check_id} was removed")
    for check_id in sorted(set(new_checks) - set(old_checks)):
        found.append(f"check {check_id} was added")
    for check_id in sorted(set(old_checks) & set(new_checks)):
        before, after = old_checks[check_id], new_checks[check_id]
        if before != after:
            fields = sorted(key for key in set(before) | set(after) if before.get(key) != after.get(key))
            found.append(f"check {check_id}: {', '.join(fields)} changed")
    return found or ["the canonical form changed"]


def write_file(path: Path, canonical: dict[str, Any], digest: str, revises: str | None,
               correction: str | None) -> None:
    """``.axpipe/goals/<id>/contract.json``: the contract as a person (or agent) may read it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"digest": digest, "revises": revises, "correction": correction, "contract": canonical}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
