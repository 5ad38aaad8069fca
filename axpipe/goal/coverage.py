"""Coverage of a batched migration: which batches are accepted, which remain.

Passing one batch does not finish the migration. A recipe's ``coverage`` section names an
inventory file listing every batch and the variable that picks one; after each run axpipe
counts the goals of that recipe that are complete, by batch, and reports what remains.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from axpipe.recipe import schema
from axpipe.store import Store
from axpipe.store import goals as sql


def batches(root: Path, spec: schema.Coverage) -> list[str] | str:
    """The inventory's batch names, or a sentence saying why they cannot be read."""
    import yaml

    path = root / spec.inventory
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as error:
        return f"cannot read the inventory {spec.inventory}: {error}"
    listed = data.get(spec.key) if isinstance(data, dict) else None
    if isinstance(listed, dict):
        return [str(name) for name in listed]
    if isinstance(listed, list):
        return [str(item) for item in listed]
    return f"the inventory {spec.inventory} has no '{spec.key}' mapping or list"


def report(store: Store, root: Path, recipe_name: str, spec: schema.Coverage) -> dict[str, Any]:
    """Accepted and remaining batches, with the state of the ones not accepted."""
    import json

    names = batches(root, spec)
    if isinstance(names, str):
        return {"error": names}
    states: dict[str, str] = {}
    for row in sql.list_goals(store):
        if row["recipe"] != recipe_name:
            continue
        value = json.loads(row["variables"]).get(spec.variable)
        if value is not None:
            states[str(value)] = row["status"]
    accepted = [name for name in names if states.get(name) == "complete"]
    remaining = {name: states.get(name, "not started") for name in names if name not in accepted}
    return {"total": len(names), "accepted": accepted, "remaining": remaining,
            "unknown": sorted(set(states) - set(names))}


def describe(data: dict[str, Any]) -> str:
    if "error" in data:
        return f"coverage unknown: {data['error']}"
    remaining = ", ".join(f"{name} ({state})" for name, state in data["remaining"].items()) or "none"
    accepted = ", ".join(data["accepted"]) or "none"
    return (f"{len(data['accepted'])} of {data['total']} batches accepted ({accepted}); remaining: {remaining}"
            + ("" if not data["remaining"] else " — passing one batch does not finish the migration"))
