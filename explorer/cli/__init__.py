"""The `jbodcheck` command line (docs/cli.md): one small module per command, over the reports (explorer/reports/)
and the searches.

  entry.py        the console script: the signal handler first, then the imports, then app.py
  app.py          the command group (every command lazy) and ``main`` (every outcome mapped to its exit code:
                  exits.py; a closed stdout: stdout.py)
  options.py      the shared click options (the model's, --plugin, the trace outputs)
  model_value.py  preset, variant and options -> the one model value (through explorer/catalog.py)
  outputs.py      --json and the trace outputs around a run; checker failures
  exits.py        exit codes and bad input
  explore.py, spark.py, replay.py, fuzz.py, compare.py, prove.py, view.py, listing.py (presets, rules,
  invariants), reproduce.py (its reports without a verdict: reproduce_report.py): the commands; submit.py: the
  driver script for spark-submit

Importing this package imports none of them (entry.py installs the signal handler before they load): ``main``,
``cli`` and ``default_workers`` are looked up when first asked for.
"""
from __future__ import annotations

_LAZY = {"main": "app", "cli": "app", "default_workers": "explore"}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
