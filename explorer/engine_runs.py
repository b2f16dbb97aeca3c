"""How each registered engine (explorer/engines.py) runs: ``(model, invariants, options, **settings) ->
SearchResult``, the same call for every one. Imported only when an engine runs."""
from __future__ import annotations

from functools import partial

from explorer import search
from explorer.core import gc_paused


def bfs(model, invariants, options):
    with gc_paused():
        return search.bfs(model, invariants, options)


def dfs(model, invariants, options):
    with gc_paused():
        return search.dfs(model, invariants, options)


def simulate(model, invariants, options):
    with gc_paused():
        return search.simulate(model, invariants, options)


def liveness(model, invariants, options):
    """The liveness properties among ``invariants`` (explorer/liveness.py), on a model without symmetry
    reduction; ``options.progress`` receives its progress lines."""
    from explorer.liveness import check_liveness

    return check_liveness(model, invariants, options.progress)


def spark(model, invariants, options, *, spark):
    """The Spark search (spark_explore/) with the CLI's signal handling; the executors rebuild the model through
    the catalog. ``spark``: its SparkOptions (spark_explore/options.py)."""
    from explorer import signals
    from explorer.catalog import build_model
    from invariants.plugins import Plugins
    from spark_explore import explore_spark

    rebuild = partial(build_model, model.cfg, symmetry=model.symmetry,
                      plugins=Plugins(features=tuple(model.plugin_features)), invariants=list(invariants))
    return explore_spark(model, invariants, options, spark, signals=signals, rebuild=rebuild)
