"""What checking each plugin's shape (axpipe.plugin.shape) adds to ``plugins list``.

    .venv/bin/python bench/plugin_shape.py [--repeat N]

In one process, with every plugin module already imported, it times
:func:`axpipe.plugin.registry.list_plugins` with and without the shape check, alternating, and
prints both medians and the difference; then the import time of ``axpipe.plugin.shape``
itself (from byte code). Target: well under 1 ms of the ~80 ms a listing takes.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from typing import Any


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    from axpipe.plugin import registry

    checked = registry._shape_failure

    def unchecked(*_args: Any, **_kwargs: Any) -> None:
        return None

    def listing(check: bool) -> float:
        registry._shape_failure = checked if check else unchecked  # type: ignore[assignment]
        started = time.perf_counter()
        registry.list_plugins()
        return (time.perf_counter() - started) * 1000

    listing(True)  # import every plugin once
    without, with_check = [], []
    for _ in range(args.repeat):
        without.append(listing(False))
        with_check.append(listing(True))
    registry._shape_failure = checked  # type: ignore[assignment]
    low, high = statistics.median(without), statistics.median(with_check)
    print(f"list_plugins, modules imported: {low:.3f} ms without the shape check, {high:.3f} ms with it "
          f"(+{high - low:.3f} ms per listing, {len(registry.list_plugins())} plugins)")
    imports = subprocess.run([sys.executable, "-X", "importtime", "-c",
                              "import axpipe.plugin.registry, axpipe.plugin.shape"],
                             capture_output=True, text=True).stderr
    line = next((item for item in imports.splitlines() if item.endswith("axpipe.plugin.shape")), "")
    print(f"import axpipe.plugin.shape: {line.split('|')[1].strip() if line else '?'} us (cumulative)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
