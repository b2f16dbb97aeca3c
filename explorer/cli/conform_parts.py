"""What a conformance campaign's traces run with (the models, the cluster of a trace, what the harness can do), in
the command's process (conform.py) or on a Spark executor (conform_spark.py)."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from explorer.errors import JbodcheckFailure, one_line

from realkafka.driver.session import kraft_cluster, kraft_settings, zk_cluster, zk_settings

from .exits import BadInput
from .reproduce import _kraft_model, _steps
from .reproduce_fix import checked_cluster
from .reproduce_zk import zk_conform_model

# --kafka-defaults: the two behaviours the harness changes from Kafka's defaults (docs/conform.md, "Timers and
# defaults"): preferred-leader balancing back on (Kafka's default; the harness's config sets it off) and the
# dir-failure shutdown timeout left at Kafka's (the key dropped: 30 s from 3.8, no such setting before).
KAFKA_BEHAVIOUR = {"auto.leader.rebalance.enable": "true"}
DROPPED_FOR_DEFAULTS = ("log.dir.failure.timeout.ms",)


def _with_defaults(settings: dict, kafka_defaults: bool) -> dict:
    if not kafka_defaults:
        return settings
    return {**{k: v for k, v in settings.items() if k not in DROPPED_FOR_DEFAULTS}, **KAFKA_BEHAVIOUR}


def campaign_parts(preset: str, releases: list, *, kafka_timers: bool, format_each: bool, no_class_sharing: bool,
                   kafka_defaults: bool = False, fixes: tuple = (), jars: dict | None = None,
                   given: dict | None = None, zk=None):
    """(release -> (its model, its scenario parameters), start_cluster(model, plan), cluster_has(capability)): what a
    campaign's traces run with, in this process or on a Spark executor (conform_spark.py). ``fixes``: the model's
    candidate fixes; ``jars``: release -> their patch jars (filled before the first cluster starts); ``given``: the
    scenario model (the preset and --model's settings); ``zk``: its ZooKeeper-mode model, or None for KRaft."""
    given = given or {"preset": preset}
    jars = {} if jars is None else jars
    models = {}
    for release in releases:
        if zk is not None:
            models[release] = (zk_conform_model(zk, release), given)
            continue
        _, base, model, _ = _kraft_model(SimpleNamespace(model=given), release, fixes=fixes)
        models[release] = (model, {"preset": preset, **base})
    try:
        from realkafka.cluster import KAFKA_TIMERS, Cluster
        kind = Cluster
        if zk is not None:
            from realkafka.cluster import ZkCluster
            kind = ZkCluster
    except ImportError as e:
        raise JbodcheckFailure(f"the real-cluster harness (realkafka.cluster) is not available: {one_line(e)}") \
            from None
    timers = dict(KAFKA_TIMERS) if kafka_timers or kafka_defaults else {}

    def start_cluster(model, planned):
        release = next(r for r, (m, _) in models.items() if m is model)
        if zk is not None:
            return zk_cluster(release, model, settings={**zk_settings(model), **timers})
        cluster = kraft_cluster(release, model, planned,
                                settings=_with_defaults({**kraft_settings(model, planned), **timers}, kafka_defaults),
                                formatted_copy=not format_each, class_sharing=not no_class_sharing,
                                **({"patches": tuple(jars[release])} if jars.get(release) else {}))
        return checked_cluster(cluster, jars.get(release, {}))

    return models, start_cluster, lambda capability: capability in kind.capabilities


def around_steps(paths, models: dict, fixes: tuple = ()) -> dict:
    """release -> [(scenario name, its made steps)] of the ``--around`` scenarios (realkafka/campaign/
    neighbours.py), each checked to be of the campaign's model at that release (``models``: campaign_parts'); bad
    input naming the first field that differs, a file that is no KRaft scenario, or one with no step to mutate."""
    from explorer.scenario import ScenarioError, load_scenario
    from realkafka.campaign.neighbours import made_steps

    out: dict = {release: [] for release in models}
    for path in paths:
        try:
            scenario = load_scenario(path)
            for release, (campaign_model, _) in models.items():
                try:
                    model = _kraft_model(scenario, release, path=path, fixes=fixes)[2]
                except BadInput as e:
                    raise BadInput(f"--around {path}: {e}") from None
                mine, theirs = model.cfg.as_dict(), campaign_model.cfg.as_dict()
                differs = [k for k in mine if mine[k] != theirs.get(k)]
                if differs:
                    raise BadInput(f"--around {path}: its model is not the campaign's: " + ", ".join(
                        f"{k} {mine[k]!r} (the campaign's {theirs.get(k)!r})" for k in differs)
                        + "; give the campaign --preset/--model settings that match")
                made = made_steps(_steps(scenario, model))
                if not made:
                    raise BadInput(f"--around {path}: none of its steps is one the harness makes happen")
                out[release].append((Path(path).name, made))
        except ScenarioError as e:
            raise BadInput(f"--around {path}: {e}") from None
    return out
