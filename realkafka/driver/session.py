"""The harness's entry point for a run on a real cluster (docs/realkafka.md, "Roles"): the cluster a model's run
needs (its spec from the model and the plan: KRaft, ``kraft_cluster``, or ZooKeeper mode, ``zk_cluster``) and a
``Session`` that starts it, drives it (the scenario's Driver, a campaign's chaos run) and stops it on any exit.
`jbodcheck reproduce` and `jbodcheck conform` call it; the commands keep their options, messages and exit codes."""
from __future__ import annotations

from typing import Callable

# The metadata.version a cluster "before 3.7-IV2" (the model's option mv_upgrade) is formatted at: the last one
# before directory assignment that every release from 3.7 to 4.4 formats (4.x's oldest is 3.3-IV3).
BEFORE_JBOD_MV = "3.6-IV2"


def kraft_settings(model, planned) -> dict:
    """The cluster's settings that make it the model's environment (docs/reproduce.md, "The cluster")."""
    settings = {"auto.leader.rebalance.enable": "false",   # the model has no preferred-leader balancing
                "unclean.leader.election.enable": str(bool(model.cfg.unclean_election)).lower()}
    if not planned.dir_failure_timeout:
        # the model run takes no BrokerDirFailureTimeout (no kraft-sessions, a release before 3.8, or a trace
        # without it: plan.cluster_steps): a broker whose dir failure is not acknowledged yet (its heartbeats
        # held) stays up, as in the model
        settings["log.dir.failure.timeout.ms"] = "3600000"
    return settings


def zk_settings(model) -> dict:
    """The Kafka settings a ZooKeeper-mode run sets beside the harness's: the model's unclean election."""
    return {"unclean.leader.election.enable": str(bool(model.cfg.unclean_election)).lower()}


def format_at(model) -> dict:
    """The cluster's metadata.version at format (ClusterSpec.metadata_version) where the model starts before
    3.7-IV2; the release's latest otherwise."""
    return {"metadata_version": BEFORE_JBOD_MV} if dict(model.cfg.options).get("mv_upgrade") else {}


def answer_proxy(planned) -> dict:
    """ClusterSpec(answers=True) where the plan holds the controller's answers to AssignReplicasToDirs (the
    kraft-future window between the acceptance of a -future dir and the swap; docs/conform.md)."""
    return {"answers": True} if getattr(planned, "answers", ()) else {}


def kraft_cluster(release: str, model, planned, *, settings: dict | None = None, elr: bool | None = None,
                  keep: bool = False, log: Callable[[str], None] | None = None, **harness):
    """The KRaft cluster (not started) that runs ``planned`` on ``model``: its brokers and dirs, ``settings``
    (``kraft_settings`` by default), its format and answer proxy as the model and the plan need them; ``harness``:
    more ClusterSpec options (formatted_copy, class_sharing, patches). ValueError for a spec Kafka cannot run."""
    from realkafka.cluster import Cluster, ClusterSpec    # at the call: a test stands a scripted harness in its place

    spec = ClusterSpec(release=release, brokers=model.cfg.brokers, dirs=model.cfg.dirs, elr=elr,
                       settings=kraft_settings(model, planned) if settings is None else settings, keep=keep,
                       **format_at(model), **answer_proxy(planned), **harness)
    return Cluster(spec, log=log or (lambda line: None))


def zk_cluster(release: str, model, *, settings: dict | None = None, keep: bool = False,
               log: Callable[[str], None] | None = None):
    """The ZooKeeper-mode cluster (not started) that runs ``model``; ValueError for a release without the mode."""
    from realkafka.cluster import ClusterSpec, ZkCluster

    spec = ClusterSpec(release=release, brokers=model.cfg.brokers, dirs=model.cfg.dirs,
                       settings=zk_settings(model) if settings is None else settings, keep=keep)
    return ZkCluster(spec, log=log or (lambda line: None))


class Session:
    """One run on one cluster: ``run`` starts ``cluster``, makes its driver (``driver_of(cluster)``: a scenario's
    Driver, a campaign's chaos run), drives it and stops the cluster on any exit (an error, an interrupt). The
    driver stays readable after a failure (``driver``: a partial result to report); ``kept`` is the cluster's
    directory when ``keep`` (its logs and data)."""

    def __init__(self, cluster, driver_of: Callable, *, keep: bool = False):
        self.cluster, self.driver_of, self.keep = cluster, driver_of, keep
        self.driver = None
        self.kept = None

    def run(self, drive: Callable = lambda driver: driver.run(), after: Callable = lambda cluster, outcome: None):
        """What ``drive(driver)`` returns (by default the driver's ``run()``); ``after(cluster, outcome)`` runs while
        the cluster is still up (a check of its patched classes, its logs kept)."""
        with self.cluster as cluster:
            self.kept = getattr(cluster, "root", None) if self.keep else None
            self.driver = self.driver_of(cluster)
            outcome = drive(self.driver)
            after(cluster, outcome)
        return outcome
