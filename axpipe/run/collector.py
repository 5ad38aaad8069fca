"""Python's cyclic garbage collector during the start-up of ``axpipe run``.

Start-up (axpipe's and Hydra's imports, composition, validation) creates some 70,000
objects the collector tracks, nearly all of which live as long as the process. The
collector's passes over them cost ~20 ms of a ~400 ms run and find little to free, so a
run started from the command line pauses the collector until its pipeline starts. Then
it freezes what start-up made (``gc.freeze``: moved where no pass looks again) and turns
the collector back on, so a loop or a long goal collects as any program does.

The cost: the few thousand objects start-up left in reference cycles are never freed
(~1.5 MB more peak memory, measured in ``docs/performance.md``). A full collection
before freezing would free them, but costs as much as the passes it saves.

Only the console script pauses: code that calls :func:`axpipe.cli.main` with its own
arguments keeps its collector as it was. A multirun does not pause either: Hydra expands
the whole sweep before its first job, and hundreds of jobs' worth of garbage would pile up
(and be frozen) with the collector off. A job refused at validation turns it back on.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence

_paused = False


def pause(arguments: Sequence[str]) -> None:
    """Turn the collector off for the start-up of ``axpipe run ARGUMENTS``, if it is on and
    the arguments ask for one run (not ``-m``/``--multirun``/``hydra.mode=``)."""
    global _paused
    if gc.isenabled() and not is_multirun(arguments):
        gc.disable()
        _paused = True


def is_multirun(arguments: Sequence[str]) -> bool:
    """Do ``axpipe run``'s arguments ask Hydra for a sweep?"""
    return any(item in ("-m", "--multirun") or item.lstrip("+~").startswith("hydra.mode=")
               for item in arguments)


def resume() -> None:
    """Freeze what start-up made and turn the collector back on, if :func:`pause` turned
    it off. Idempotent: each job of a run calls it, refused or not."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
