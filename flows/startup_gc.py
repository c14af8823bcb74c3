"""Python's cyclic garbage collector while a process imports what it needs at its start.

A process's start imports modules whose objects live as long as it does: Prefect's server package, Great Expectations,
Prefect and the pipeline in the run's own process. With Python's first threshold (a collection every 700 new container
objects), collections run thousands of times during those imports, and each full one walks every object imported so
far again. `importing` raises that threshold to IMPORT_THRESHOLD[0] for the imports; `imported` sets it back and
freezes what they made (gc.freeze: later collections skip it, and so does the full one at exit).

Measured on the temporary Prefect server, which imports for ~2 s before it answers (flows/prefect_server.py): started
alone, 4 of each alternated, it answered in 2.42 s (median) with Python's thresholds and 1.99 s with these, at the
same memory (174 MiB PSS after three requests). Paused outright (gc.disable) it answered in 1.82 s but kept 10 MiB
more: the garbage the imports make in cycles was never collected, and frozen with the rest.
"""

from __future__ import annotations

import gc

IMPORT_THRESHOLD = (10_000, 10, 10)


def importing() -> tuple[int, int, int]:
    """Collect less often during the imports to come; returns the thresholds `imported` sets back."""
    previous = gc.get_threshold()
    gc.set_threshold(*IMPORT_THRESHOLD)
    return previous


# the thresholds this process's startup imports were made with, once `imported` was called (None before): what a test
# asks a worker process
imported_with: tuple[int, int, int] | None = None


def imported(previous: tuple[int, int, int]) -> None:
    """The imports are done: the thresholds `importing` found, and what was made so far frozen."""
    global imported_with
    imported_with = gc.get_threshold()
    gc.set_threshold(*previous)
    gc.freeze()


def preloading(module: str, main: str) -> str:
    """Code for `python -c`: import `module` between `importing` and `imported`, then run the module `main` as
    `python -m main` would, with the arguments given after the code (sys.argv[1:])."""
    return (
        "import runpy\n"
        "from flows import startup_gc\n"
        "previous = startup_gc.importing()\n"
        f"import {module}\n"
        "startup_gc.imported(previous)\n"
        "del startup_gc, previous\n"
        f"runpy.run_module({main!r}, run_name='__main__', alter_sys=True)\n")
