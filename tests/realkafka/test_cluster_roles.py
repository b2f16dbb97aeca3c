"""The real-cluster harness's roles and declared capabilities (realkafka/cluster/roles.py; docs/realkafka.md,
"Roles"), without a JVM: each cluster kind implements the four roles, declares only known capabilities, and every
capability a driven act needs is one a kind can declare."""
import pytest

from realkafka.cluster import Cluster, ClusterSpec, ZkCluster
from realkafka.cluster.roles import CAPABILITIES, Client, Lifecycle, Nemesis, Observer, has, unknown_capabilities
from realkafka.driver.mapping import RULES
from realkafka.driver.zk.mapping import RULES as ZK_RULES


@pytest.mark.parametrize("kind", [Cluster, ZkCluster])
def test_each_cluster_kind_plays_the_four_roles_and_declares_known_capabilities(kind):
    cluster = kind(ClusterSpec(release="3.9.2"))            # not started: the constructor starts nothing
    assert all(isinstance(cluster, role) for role in (Lifecycle, Nemesis, Client, Observer))
    assert kind.capabilities and unknown_capabilities(kind.capabilities) == []
    for capability in kind.capabilities:                      # a declared capability has its method
        method = {"hold_requests": "hold", "metadata_log": "metadata_records"}.get(capability, capability)
        assert callable(getattr(kind, method)), capability


def test_the_kinds_differ_where_zookeeper_mode_lacks_what_kraft_has():
    assert has(Cluster, "hold_answers") and not has(ZkCluster, "hold_answers")
    assert has(ZkCluster, "move_controller") and not has(Cluster, "move_controller")
    assert not has(ZkCluster, "upgrade_metadata_version") and not has(ZkCluster, "metadata_log")


def test_every_capability_a_driven_act_needs_is_a_known_one():
    needs = {h.needs for h in RULES.values() if h.needs is not None}
    assert needs and unknown_capabilities(needs) == []
    assert needs <= Cluster.capabilities
    zk_needs = {h.needs for h in ZK_RULES.values() if h.needs is not None}
    assert zk_needs and zk_needs <= ZkCluster.capabilities


def test_an_unknown_capability_is_refused_and_an_undeclaring_cluster_has_none():
    with pytest.raises(ValueError, match="no harness capability 'replace_disk'"):
        has(Cluster, "replace_disk")
    assert not has(object(), "delete_topic")
    assert set(CAPABILITIES) >= Cluster.capabilities | ZkCluster.capabilities



@pytest.mark.parametrize("base, lacking, rule", [
    ({"preset": "tiny", "rf": 1, "deletion": True}, "delete_topic", "DeleteTopic"),          # ZooKeeper mode
    ({"preset": "kraft-mv-upgrade"}, "upgrade_metadata_version", "UpgradeMetadataVersion"),  # KRaft
])
def test_a_campaign_drives_only_the_rules_whose_capability_the_cluster_kind_declares(base, lacking, rule):
    from explorer.cli.model_value import command_model
    from realkafka.campaign import generate, zk

    base = dict(base)
    model = command_model(base.pop("preset"), {}, base=base, quiet=True)
    drivable = zk.drivable if model.cfg.variant != "kraft" else generate.drivable
    every = {r.name for r, _ in drivable(model)}
    assert rule in every
    assert {r.name for r, _ in drivable(model, lambda capability: capability != lacking)} == every - {rule}
