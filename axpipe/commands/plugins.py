"""``axpipe plugins list``."""

from __future__ import annotations

import sys

from axpipe.errors import InputError, not_found_message
from axpipe.plugin import registry


def list_plugins(*, as_json: bool, namespace: str | None) -> int:
    """Print every declared plugin; broken ones with their error. Exit 0 even when some are
    broken: a broken plugin only fails the runs that use it."""
    if namespace is not None and namespace not in registry.NAMESPACES:
        raise InputError("--namespace: " + not_found_message("namespace", namespace, registry.NAMESPACES))
    infos = registry.list_plugins([namespace] if namespace else None)
    if as_json:
        import json  # only --json needs it

        json.dump([info.to_json() for info in infos], sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    for name, what in registry.NAMESPACES.items():
        if namespace is not None and name != namespace:
            continue
        members = [info for info in infos if info.namespace == name]
        sys.stdout.write(f"{name}  ({what})\n")
        if not members:
            sys.stdout.write("  (none installed)\n")
        for info in members:
            state = "ok" if info.error is None else "BROKEN"
            sys.stdout.write(f"  {info.name:<20} {state:<7} {info.distribution}  {info.module}\n")
            if info.error is not None:
                sys.stdout.write(f"      {info.error}\n")
    return 0
