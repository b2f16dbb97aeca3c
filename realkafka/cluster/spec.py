"""What cluster to start (``ClusterSpec``): the release, its brokers and dirs, its settings and the harness's
options (docs/realkafka.md)."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

import attrs

from .release import parse_version

@attrs.frozen
class ClusterSpec:
    """What to start. ``elr``: None keeps the release's default for a new cluster (off before 4.1, on from 4.1);
    True/False sets it on 4.x (the storage tool's ``--feature eligible.leader.replicas.version=1|0``); on 3.x
    ELR is off (False is accepted) and cannot be turned on with a production metadata version (docs/realkafka.md,
    "ELR"). ``settings`` are extra properties of every node; ``broker_settings`` and ``controller_settings`` of
    one kind only."""

    release: str
    brokers: int = 2
    dirs: int = 2
    elr: bool | None = None
    settings: Mapping[str, str] = attrs.field(factory=dict)
    broker_settings: Mapping[str, str] = attrs.field(factory=dict)
    controller_settings: Mapping[str, str] = attrs.field(factory=dict)
    heap: str = "320m"
    keep: bool = False             # leave the temporary directory (logs, data) for a post-mortem
    # format at this metadata.version (the storage tool's --release-version, e.g. "3.6-IV2"); None: the latest
    metadata_version: str | None = None
    start_timeout: float = 240     # JVM start-up on a loaded 2-core machine takes long; a wait is not a speed test
    # jars put ahead of the release's jars on the controller's and the brokers' classpath (a fix's patched classes,
    # realkafka/patches/), each node then logging its class loading (CLASS_LOAD_LOG); () runs the release as is
    patches: tuple = attrs.field(default=(), converter=lambda jars: tuple(Path(j) for j in jars))
    # the dirs copied from a tree formatted once (formatted.py: fresh ids, as the storage tool writes), not formatted
    formatted_copy: bool = False
    # the nodes' JVMs map a class-data sharing archive of their kind (sharing.py), trained by the first cluster
    class_sharing: bool = False
    # the brokers reach the controller through the answer proxy (realkafka/cluster/answers.py), which can hold the
    # controller's answers to AssignReplicasToDirs (hold_answers)
    answers: bool = False

    def __attrs_post_init__(self):
        version = parse_version(self.release)
        if not 1 <= self.brokers <= 16 or not 1 <= self.dirs <= 8:
            raise ValueError(f"a cluster of {self.brokers} brokers x {self.dirs} dirs is outside 1..16 x 1..8")
        if self.elr and version[0] < 4:
            raise ValueError(f"Kafka {self.release} runs no ELR on a production metadata version "
                             f"(MetadataVersion.isElrSupported needs an unstable one in 3.8 and 3.9): ELR is 4.0 and later")

