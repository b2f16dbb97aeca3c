"""The engines, each registered once: what it checks, the options it takes beyond the model's, the limits that
bound it, and how its result reads (issue 49). The CLI chooses an engine here and asks it what it accepts; the
reports ask it how a verdict reads; no other module compares an engine's name.

An engine runs a model value with a list of properties and ``SearchOptions`` (explorer/search.py), plus its own
settings (Spark's ``SparkOptions``), and returns a ``SearchResult`` whose ``engine`` is its name. The engines'
code lives where it always has (explorer/search.py, parallel.py, liveness.py; spark_explore/; explorer/fuzz.py
and scenario.py for the two that their own commands run); explorer/engine_runs.py calls each the same way,
importing liveness and Spark only when they run.

Adding an engine: its module, a function in explorer/engine_runs.py that runs it, and one ``Engine(...)`` below.
"""
from __future__ import annotations

from typing import Callable

import attrs

from explorer import engine_runs

# The explore options any engine takes (the model's, the invariants, the outputs); the others are listed per
# engine in ``Engine.takes``.
SEARCH_LIMITS = ("max_depth", "max_states", "max_memory")


@attrs.frozen
class Engine:
    name: str
    help: str                              # what `explore --engine` says of it
    # The function of explorer/engine_runs.py that runs it: (model, invariants, options, **settings) ->
    # SearchResult (looked up when it runs); None: the command that has it runs it (replay, fuzz).
    runner: str | None
    exhaustive: bool                       # visits every reachable state unless a limit stops it
    checks: str = "safety"                 # "safety": invariants, a violation is a trace; "liveness": lassos
    selectable: bool = True                # named by `explore --engine`
    # The explore options it takes (their flags), beyond the model's, --invariant, --all-violations, --symmetry
    # and the outputs.
    takes: tuple[str, ...] = ()
    # An option it does not take -> what it has instead (the refusal says so).
    instead: dict = attrs.field(factory=dict)
    # The options (SearchOptions or FuzzOptions fields) that bound it: the report's "bounds.search.limits".
    limits: tuple[str, ...] = SEARCH_LIMITS
    # How its counterexample reads in a verdict line (None: "found by the NAME engine").
    trace: str | None = None
    por_trace: str | None = None           # the same, with partial-order reduction used
    # A search that is never exhaustive: (limits, result) -> what it covered, in words.
    scope: Callable[[dict, object], str] | None = None

    def accepts(self, flag: str) -> bool:
        return flag in self.takes

    def refusal(self, flag: str, named: str | None = None) -> str:
        """One line: ``flag`` (said as ``named``: "--checkpoint and --resume") is not for this engine; which
        engines take it, and what this one has instead."""
        takers = [e.name for e in ENGINES.values() if e.selectable and e.accepts(flag)]
        names = ", ".join(takers[:-1]) + " and " + takers[-1] if len(takers) > 1 else "".join(takers) or "none"
        verb = "applies" if named is None else "apply"
        text = f"{named or flag} {verb} to --engine {names} only (not {self.name})"
        return text + (f"; {self.instead[flag]}" if flag in self.instead else "")

    def run(self, model, invariants: list, options, **settings):
        if self.runner is None:
            raise ValueError(f"the {self.name} engine is run by its own command, not through the registry")
        return getattr(engine_runs, self.runner)(model, invariants, options, **settings)


def _random_scope(limits: dict, result) -> str:
    steps = limits.get("max_depth") if limits.get("max_depth") is not None else limits.get("walk_depth")
    return f"{limits.get('walks')} random walk(s) of up to {steps} steps, seed {limits.get('seed')}, not exhaustive"


def _hypothesis_scope(limits: dict, result) -> str:
    return (f"{limits.get('examples')} Hypothesis example(s) of up to {limits.get('steps')} steps, seed "
            f"{limits.get('seed')}, not exhaustive")


def _replay_scope(limits: dict, result) -> str:
    return f"one scenario of {result.depth} step(s), not a search"


_BOUNDED = ("--max-depth", "--max-states")
_BFS_CHECKPOINTS = ("--checkpoint", "--checkpoint-every", "--resume")
SPARK_FLAGS = ("--master", "--spark-partitions", "--checkpoint-dir", "--spark-conf")

ENGINES: dict[str, Engine] = {e.name: e for e in (
    Engine("bfs", "exhaustive, shortest traces (on --workers processes: the parallel BFS)",
           "bfs", exhaustive=True,
           takes=(*_BOUNDED, "--max-memory", "--workers", "--por", *_BFS_CHECKPOINTS),
           trace="a shortest trace (BFS)",
           por_trace="BFS with partial-order reduction (a trace, maybe not the shortest)"),
    Engine("dfs", "exhaustive depth-first", "dfs", exhaustive=True,
           takes=(*_BOUNDED, "--max-memory", "--por")),
    Engine("random", "seeded random walks", "simulate", exhaustive=False,
           takes=(*_BOUNDED, "--max-memory", "--seed", "--walks"),
           limits=("walks", "walk_depth", *SEARCH_LIMITS, "seed"), scope=_random_scope),
    Engine("spark", "BFS on Apache Spark (docs/spark.md)", "spark", exhaustive=True,
           takes=(*_BOUNDED, *SPARK_FLAGS, "--resume"),
           instead={"--checkpoint": "the Spark engine has --checkpoint-dir (and --resume DIR)",
                    "--max-memory": "for Spark set --spark-conf spark.driver.memory=... and spark.executor.memory=..."},
           trace="a shortest trace (BFS on Spark)"),
    Engine("liveness", "the liveness properties under weak fairness (explore --liveness; explorer/liveness.py)",
           "liveness", exhaustive=True, checks="liveness", selectable=False,
           takes=("--por",),
           trace="a lasso of the whole state graph"),
    Engine("hypothesis", "Hypothesis stateful testing (jbodcheck fuzz; explorer/fuzz.py)", None, exhaustive=False,
           selectable=False, limits=("examples", "steps", "seed"), scope=_hypothesis_scope),
    Engine("replay", "one scenario file, step by step (jbodcheck replay; explorer/scenario.py)", None,
           exhaustive=False, selectable=False, scope=_replay_scope),
)}


def engine_named(name: str) -> Engine:
    """The registered engine ``name`` (a result's ``engine``); KeyError for another name."""
    return ENGINES[name]


def default_engine() -> Engine:
    """The engine `explore` runs when --engine is not given."""
    return ENGINES["bfs"]


def selectable() -> list[Engine]:
    """The engines `explore --engine` names, in order."""
    return [e for e in ENGINES.values() if e.selectable]


def liveness_engine() -> Engine:
    return next(e for e in ENGINES.values() if e.checks == "liveness")
