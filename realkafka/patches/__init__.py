"""The candidate fixes as patches of Kafka's own code (docs/fixes.md, "On Kafka's own code"): per fix and release a
unified diff kept as text (``realkafka/patches/<fix>/<release>.diff``), applied to the release's own source,
compiled against the release's jars into a small jar in the cache, and put ahead of the release's jars on the
controller's and brokers' classpath (``ClusterSpec.patches``). Nothing else of Kafka is rebuilt; no jar is
committed.

    from realkafka.patches import patched_jar
    jar = patched_jar("assign-lost-at-start-up", "4.4.0")     # Path of the cached jar, built on first use

``jbodcheck kafka patch FIX --kafka VERSION`` prints the same path. Like realkafka/cluster/, this package knows
Kafka, not the model.
"""
from .build import (PatchError, cached_jar, cached_sources, check_port, jar_classes, patched_jar, patched_source,
                    release_source)
from .catalogue import PORTS, SOURCES, Source, patch_path, patched_releases, patches
from .loaded import check_loaded

__all__ = ["PORTS", "SOURCES", "PatchError", "Source", "cached_jar", "cached_sources", "check_loaded", "check_port",
           "jar_classes", "patch_path", "patched_jar", "patched_releases", "patched_source",
           "patches", "release_source"]
