"""The client role of a real cluster (docs/realkafka.md, "Roles"): the Admin API, a producer and a consumer, each a
call of the probe (probe.py, the harness's Java helper in one JVM)."""
from __future__ import annotations

import base64
import time
from typing import Mapping

import attrs

from .errors import HarnessError

@attrs.frozen
class ProduceResult:
    offset: int | None             # the acknowledged record's offset (acks=all), or None
    error: str | None              # the producer's error ("NotEnoughReplicasException: ..."), or None


@attrs.frozen
class ConsumeResult:
    records: tuple                 # ((offset, value bytes), ...) read from offset 0 up to the high watermark
    start: int                     # the log start offset the consumer was given
    end: int                       # the high watermark the consumer read up to (endOffsets)
    complete: bool                 # it reached the end within the timeout



class ClusterClient:
    """What a client of the cluster asks of it; the waits read the observer's views (observer.py)."""

    def _call(self, op: str, timeout: float = 60, **args):
        if self.probe is None:
            raise HarnessError("the cluster is not running")
        return self.probe.call(op, timeout=timeout, **args)

    def create_topic(self, topic: str, assignment: Mapping[int, list[int]], *, configs: Mapping[str, str] | None = None,
                     wait: bool = True, timeout: float = 60) -> None:
        """createTopics with a manual assignment (partition -> replicas, the first the preferred leader); with
        ``wait``, until the controller's image has every partition with a leader."""
        self._call("createTopic", timeout, topic=topic, assignment={str(p): list(r) for p, r in assignment.items()},
                   configs={k: str(v) for k, v in (configs or {}).items()})
        if wait:
            self.wait_until(lambda o: all((topic, p) in o.controller.partitions
                                          and o.controller.partitions[(topic, p)].leader >= 0 for p in assignment),
                            timeout=timeout, what=f"topic {topic} created with leaders", light=True)

    def delete_topic(self, topic: str, *, wait: bool = True, timeout: float = 60) -> None:
        """deleteTopics; with ``wait``, until the controller's image has none of the topic's partitions."""
        self._call("deleteTopic", timeout, topic=topic)
        if wait:
            self.wait_until(lambda o: not any(t == topic for t, _ in o.controller.partitions),
                            timeout=timeout, what=f"topic {topic} deleted", light=True)

    def reassign(self, topic: str, partition: int, replicas: list[int] | None) -> None:
        """alterPartitionReassignments (None cancels the reassignment)."""
        self._call("reassign", topic=topic, partition=partition, replicas=None if replicas is None else list(replicas))

    def reassignments(self) -> dict:
        return self._call("listReassignments")

    def alter_replica_log_dir(self, topic: str, partition: int, *, broker: int, dir: int) -> None:
        """alterReplicaLogDirs: move the replica on ``broker`` to its dir ``dir`` (a "-future" log until caught up)."""
        self._call("alterReplicaLogDir", topic=topic, partition=partition, broker=broker,
                   path=str(self.dir_path(broker, dir)))

    def elect_leaders(self, topic: str, partition: int, kind: str = "preferred") -> str | None:
        """electLeaders (``kind`` "preferred" or "unclean"); the partition's error, or None."""
        if kind not in ("preferred", "unclean"):
            raise ValueError(f"election kind {kind!r} is not preferred or unclean")
        return self._call("electLeaders", topic=topic, partition=partition, type=kind)["error"]

    def produce(self, topic: str, partition: int, value: bytes, *, timeout: float = 30) -> ProduceResult:
        """One record with acks=all: its offset once acknowledged, or the producer's error after its delivery
        timeout (the first call's ``timeout``: one producer serves the cluster), never a record that lands after
        a reported failure."""
        r = self._call("produce", timeout + 30, topic=topic, partition=partition,
                       value=base64.b64encode(value).decode(), delivery_timeout_ms=int(timeout * 1000))
        return ProduceResult(offset=r["offset"], error=r["error"])

    def send(self, topic: str, partition: int, value: bytes, *, timeout: float = 30):
        """One record with acks=all, sent without waiting for its acknowledgement: the returned call ``sent()``
        waits for it and gives the ProduceResult ``produce`` gives (the record's acknowledgement may await what the
        caller does meanwhile; the probe serves other calls while it waits)."""
        ticket = self._call("produceAsync", 60, topic=topic, partition=partition,
                            value=base64.b64encode(value).decode(), delivery_timeout_ms=int(timeout * 1000))["ticket"]
        deadline = time.monotonic() + timeout + 30

        def sent() -> ProduceResult:
            while True:
                r = self._call("produceResult", 30, ticket=ticket, wait_ms=200)
                if r["done"]:
                    return ProduceResult(offset=r["offset"], error=r["error"])
                if time.monotonic() > deadline:
                    raise HarnessError(f"the probe's send of a record to {topic}-{partition} has no outcome "
                                       f"{timeout + 30:.0f} s after it (the producer's delivery timeout is {timeout:.0f} s)")
        return sent

    def consume(self, topic: str, partition: int, *, timeout: float = 30) -> ConsumeResult:
        """What a consumer reads from offset 0 up to the high watermark (read_uncommitted)."""
        r = self._call("consume", timeout, topic=topic, partition=partition)
        records = tuple((x["offset"], None if x["value"] is None else base64.b64decode(x["value"]))
                        for x in r["records"])
        return ConsumeResult(records=records, start=r["start"], end=r["end"], complete=r["complete"])

    def upgrade_metadata_version(self, *, timeout: float = 60) -> tuple[int, int]:
        """Admin updateFeatures: metadata.version to the highest level the brokers support (the release's latest
        production one); (the feature level before, after)."""
        r = self._call("upgradeMetadataVersion", timeout)
        self._log(f"cluster: metadata.version upgraded from level {r['before']} to {r['after']}")
        return r["before"], r["after"]

    def describe_topics(self, topics: list[str], *, timeout: float = 30) -> dict:
        """describeTopics, as the brokers' metadata says: (topic, partition) -> {leader, isr, replicas, elr,
        lastKnownElr} (elr/lastKnownElr None where the release's client lacks them)."""
        r = self._call("describeTopics", timeout, topics=list(topics))
        return {(t, int(p)): v for t, parts in r.items() for p, v in parts.items()}

    def features(self) -> dict:
        """describeFeatures: the finalized feature levels (metadata.version, eligible.leader.replicas.version)."""
        return self._call("describeFeatures")

