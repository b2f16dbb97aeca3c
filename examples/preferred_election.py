"""A worked example of a feature in one module (docs/extending.md, "Adding a feature"): preferred leader election.

Kafka's controller moves a partition's leadership back to its preferred replica, the first of its assignment,
when that replica is live and in the ISR (``auto.leader.rebalance.enable``, or ``kafka-leader-election.sh
--election-type preferred``; PartitionStateMachine's PreferredReplicaPartitionLeaderElectionStrategy). This
module brings everything the feature needs: a field of the controller's record (how many such elections
happened, declared with its initial value and how it reads in traces), a rule built from the ZooKeeper
controller's own steps, an invariant, an option (the bound on elections) and a preset. Load it as a plugin:

    jbodcheck explore --plugin examples/preferred_election.py --preset preferred-election
    jbodcheck explore --plugin examples/preferred_election.py --preset small --option max_preferred_elections=2
    jbodcheck rules --plugin examples/preferred_election.py --json

Every engine (BFS, DFS, random, the multi-process BFS, Spark, fuzz, replay) then explores it with the rest of
the design; tests/kernel/test_feature_example.py shows it.
"""
from __future__ import annotations

from invariants import invariant
from model import Feature, Option
from model.spec.schema import Field, Show
from model.storage.config import ONE_OF_EACH
from model.storage.state import P_ONLINE
from model.zk.controller import ControllerStep, is_replica_online


def _whole_number(value):
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        return f"must be a whole number of at least 0, not {value!r}"
    return None


PREFERRED_ELECTION = Feature(
    "preferred-election",
    "Preferred leader election: the controller moves leadership back to a partition's first assigned replica when "
    "it is live and in the ISR",
    options=(Option("max_preferred_elections", 1, "Bound: preferred leader elections in one run.", _whole_number),),
    # A field of the controller's record: durable (the controller record has no crash), shown in traces.
    fields=(Field("preferred_elections", "controller", lambda m: 0, show=Show("preferred_elections"),
                  doc="How many preferred leader elections happened (the bound)."),),
)


def _partitions(m):
    return [(p,) for p in range(m.cfg.partitions)] if m.option("max_preferred_elections") > 0 else []


def _guard(m, s, partition):
    if s.controller.preferred_elections >= m.option("max_preferred_elections"):
        return f"the bound --option max_preferred_elections={m.option('max_preferred_elections')} is used up"
    c = s.controller
    part = c.partitions[partition]
    if part.state != P_ONLINE:
        return f"partition {partition} is not online"
    preferred = c.assigned[partition][0]
    if part.leader == preferred:
        return f"partition {partition}'s preferred replica {preferred} already leads"
    if not is_replica_online(c.live, c.offline, preferred, partition) or not part.isr >> preferred & 1:
        return f"partition {partition}'s preferred replica {preferred} is not a live ISR member"
    return None


@PREFERRED_ELECTION.rule("PreferredLeaderElection", params=("partition",), domain=_partitions, guard=_guard,
                         kind="controller",
                         reference="KafkaController.onPreferredReplicaElection; PartitionStateMachine "
                                   "(PreferredReplicaPartitionLeaderElectionStrategy)")
def preferred_leader_election(m, s, partition):
    """The controller elects the partition's preferred replica (its first assigned replica, live and in the ISR)
    as leader: the leader epoch is bumped, the ISR kept, and LeaderAndIsr (isNewReplica=false) goes to the
    assigned replicas, with UpdateMetadata to every live broker."""
    step = ControllerStep(m, s)
    part = step.partitions[partition]
    step.partitions[partition] = part._replace(leader=step.assigned[partition][0], leader_epoch=part.leader_epoch + 1)
    step.add_leader_and_isr(step.assigned[partition], partition, is_new=False)
    step.flush()
    after = step.finish()
    return after._replace(controller=after.controller._replace(preferred_elections=s.controller.preferred_elections + 1))


@invariant("preferred_election_elects_a_live_isr_member", kind="transition", symmetric=True,
           statement="A preferred leader election makes the partition's first assigned replica its leader, and "
                     "only while that replica is live (as the controller knows it) and in the ISR.",
           reference="KafkaController.onPreferredReplicaElection (PreferredReplicaPartitionLeaderElectionStrategy)")
def preferred_election_elects_a_live_isr_member(model, state, action, after):
    if model.rules[action.rule].name != "PreferredLeaderElection":
        return None
    p = action.args[0]
    c = state.controller
    leader, isr = after.controller.partitions[p].leader, after.controller.partitions[p].isr
    preferred = c.assigned[p][0]
    if leader != preferred:
        return f"partition {p}'s preferred election made {leader} the leader, not its preferred replica {preferred}"
    if not isr >> leader & 1 or not is_replica_online(c.live, c.offline, leader, p):
        return f"partition {p}'s preferred election made {leader} the leader while it is not a live ISR member"
    return None


PREFERRED_ELECTION.add_invariants(preferred_election_elects_a_live_isr_member)
PREFERRED_ELECTION.presets["preferred-election"] = (
    "Preferred leader election (examples/preferred_election.py): 2 brokers x 2 dirs, 1 partition, RF 2; one record; "
    "one of each event, at most two faults; one preferred election",
    dict(brokers=2, dirs=2, partitions=1, rf=2, max_records=1, consumer=False, **ONE_OF_EACH,
         options={"max_preferred_elections": 1}))

# What jbodcheck's plugin loader adds to the model (invariants/plugins.py).
FEATURES = [PREFERRED_ELECTION]
