"""KRaft mode's topic deletion (issue 31; docs/kraft.md, "Topic deletion"): the feature ``kraft-deletion``, on with
``--deletion`` as ZooKeeper mode's (the same meaning: an admin deletes a topic). The controller writes a
RemoveTopicRecord; each broker replaying it stops and deletes its replica (an Offline one stays Offline); the
topic may be created again (kraft-core's CreateTopic), with a new topic id.

Topic ids: a partition's topic id is 1 for its first topic and 2 once re-created (the model deletes a topic once).
Kafka writes the topic id in each log's partition.metadata; the model instead labels, when the topic is deleted,
the copies that exist then (``stray``): they are the deleted topic's. A broker drops them when it replays the
deletion or, if it was down, at its next start-up (LogManager's stray logs).
"""
from __future__ import annotations

from model.kraft import controller as C
from model.kraft.render import topic_of
from model.kraft.rules import CONTROLLER_EVENT, KRAFT, write
from model.spec.feature import Feature
from model.spec.schema import Field, Show
from model.storage.common import partitions
from model.storage.state import replace_at


def _per_partition(value):
    return lambda m: (value,) * m.cfg.partitions


DELETION_FIELDS = (
    Field("topics", "brokers", _per_partition(0), "volatile",
          show=Show("hosted_topic_id", "kraft_topic", "partition"),
          doc="per partition: the topic id of the broker's HostedPartition (kept while it is Offline), 0 for none"),
    Field("stray", "brokers", _per_partition(0), index="item-index-masks",
          show=Show("stray_copies", "bits", "partition"),
          doc="per partition: bitmask of dirs whose copy belongs to a deleted topic, until the broker drops it"),
)

KRAFT_DELETION = Feature(
    "kraft-deletion",
    "KRaft topic deletion: RemoveTopicRecord, the brokers' deletes (ReplicaManager.stopPartitions), stray logs, "
    "and a re-created topic with a new topic id",
    enabled=lambda cfg: cfg.deletion,
    requires=(KRAFT,),
    config_fields=("deletion",),
    flags=(),  # --deletion is the ZooKeeper-mode feature's flag: one option, the same meaning
    fields=DELETION_FIELDS,
    formats={"kraft_topic": topic_of},
)


def delete_topic_guard(m, s, partition):
    part = s.controller.partitions[partition]
    if part.leader_epoch < 0:
        return f"partition {partition} does not exist"
    if part.topic > 1:
        return f"partition {partition}'s topic was deleted once already (the model's bound)"
    return None


@KRAFT_DELETION.rule("DeleteTopic",
      reads=(*CONTROLLER_EVENT, "broker[*].copies"), writes=(*CONTROLLER_EVENT, "broker[*].stray"),
      params=("partition",), domain=partitions, guard=delete_topic_guard, kind="controller", fair=False,
      reference="ReplicationControlManager.deleteTopics, deleteTopic (RemoveTopicRecord)")
def delete_topic(m, s, partition):
    """An admin deletes the partition's topic: the controller writes a RemoveTopicRecord (the partition is gone
    from the image; its topic id is not used again). The copies of the partition that exist now are the deleted
    topic's (their partition.metadata names its id): each broker's are labelled stray."""
    s = write(m, s, [C.remove_topic(partition)])
    brokers = tuple(b._replace(stray=replace_at(b.stray, partition, b.copies[partition])) for b in s.brokers)
    return s._replace(brokers=brokers)


# 2 brokers x 2 dirs, RF 1 on broker 0: a delete, a re-creation, a dir failure and a crash (KAFKA-16157's path, and
# an assignment left for a deleted topic, KAFKA-17190's).
KRAFT_DELETION.presets["kraft-deletion"] = (
    "KRaft topic deletion: 2 brokers x 2 dirs, 1 partition, RF 1; a delete and a re-creation; a dir failure, a "
    "crash, a restart; at most two faults; no record",
    dict(variant="kraft", brokers=2, dirs=2, partitions=1, rf=1, deletion=True, max_dir_failures=1,
         max_saturations=0, max_crashes=1, max_restarts=1, max_fixes=0, max_failovers=0, max_faults=2,
         max_records=0, consumer=False))
