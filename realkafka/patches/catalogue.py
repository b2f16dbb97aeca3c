"""Which Kafka source file each candidate fix patches, and where its patches are (docs/fixes.md, "On Kafka's own
code"). The patches are text in the repository: ``realkafka/patches/<fix>/<release>.diff``, a unified diff against
that release's own source file as it sits in Kafka's repository (``patch -p1`` from the repository's root).

A release with no ``-sources`` jar on the registry (4.4.0) takes its source from an earlier release's (``PORTS``)
with ``realkafka/patches/ports/<release>/<file name>.diff`` applied where the file differs; the port is right when
the unpatched file compiles to the release's own classes (``jbodcheck kafka patch --check-port``).
"""
from __future__ import annotations

from pathlib import Path

import attrs

HERE = Path(__file__).resolve().parent


@attrs.frozen
class Source:
    """One source file of Kafka: its path in Kafka's repository, the Maven artifact whose ``-sources`` jar holds it
    (and whose jar holds its classes), and its language (javac or scalac compiles it)."""

    path: str
    artifact: str

    @property
    def entry(self) -> str:
        """Its path inside the ``-sources`` jar (and of its classes inside the jar, with .class)."""
        marker = "/src/main/java/" if "/src/main/java/" in self.path else "/src/main/scala/"
        return self.path.split(marker, 1)[1]

    @property
    def scala(self) -> bool:
        return self.path.endswith(".scala")

    @property
    def stem(self) -> str:
        """The class path without extension (kafka/server/ReplicaManager): its classes are stem.class, stem$*.class."""
        return self.entry.rsplit(".", 1)[0]

    @property
    def class_name(self) -> str:
        return self.stem.replace("/", ".")


REPLICA_MANAGER = Source("core/src/main/scala/kafka/server/ReplicaManager.scala", "kafka_2.13")
PARTITION = Source("core/src/main/scala/kafka/cluster/Partition.scala", "kafka_2.13")
REPLICATION_CONTROL = Source("metadata/src/main/java/org/apache/kafka/controller/ReplicationControlManager.java",
                             "kafka-metadata")
TOPIC_DELTA = Source("metadata/src/main/java/org/apache/kafka/image/TopicDelta.java", "kafka-metadata")

# fix -> the one source file it changes (model/kraft/fixes.py FIXES names the same classes and methods).
SOURCES: dict[str, Source] = {
    "assign-lost-at-start-up": REPLICA_MANAGER,
    "gate2-strict": PARTITION,
    "unfence-without-offline-dirs": REPLICATION_CONTROL,
    "offline-dirs-before-unfence": REPLICATION_CONTROL,
    "list-added-replica": TOPIC_DELTA,
}

# A release the registry serves no -sources jar of -> the release whose source its port starts from.
PORTS: dict[str, str] = {"4.4.0": "4.3.1"}


def patch_path(fix: str, release: str) -> Path:
    return HERE / fix / f"{release}.diff"


def port_path(release: str, source: Source) -> Path:
    return HERE / "ports" / release / f"{Path(source.path).name}.diff"


def patched_releases(fix: str) -> tuple[str, ...]:
    """The releases ``fix`` has a patch for (sorted by version)."""
    folder = HERE / fix
    found = [p.stem for p in folder.glob("*.diff")] if folder.is_dir() else []
    return tuple(sorted(found, key=lambda v: tuple(int(x) for x in v.split("."))))


def patches() -> dict[str, tuple[str, ...]]:
    """fix -> the releases it has a patch for (only fixes with at least one)."""
    return {fix: rels for fix in SOURCES if (rels := patched_releases(fix))}
