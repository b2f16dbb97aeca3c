"""The Spark engine's options and their validation (no pyspark here: the CLI checks its input before Spark starts)."""
from __future__ import annotations

import os
import re
import shutil
import socket
import sys
import tempfile
from urllib.parse import urlparse

import attrs


class SparkSetupError(ValueError):
    """Spark cannot be used as asked (bad master, unusable checkpoint dir, malformed setting, failed start):
    one line for the user, exit code 2 in the CLI."""


@attrs.define
class SparkOptions:
    master: str | None = None            # None: local[*], or spark-submit's --master when run under it
    partitions: int | None = None        # None: as many as the executors have cores (defaultParallelism)
    checkpoint_dir: str | None = None    # reliable checkpoints every `checkpoint_every` levels go here
    conf: dict = attrs.Factory(dict)     # Spark settings given by the user (--spark-conf), applied last
    checkpoint_every: int = 5            # levels between reliable checkpoints (with checkpoint_dir)
    resume: bool = False                 # go on from the manifest in checkpoint_dir (spark_explore/resume.py)
    version: str = "unknown"            # jbodcheck's, named by the manifest: another version's is not resumed


# Settings that mattered on a 2-core machine (docs/spark.md); the user's --spark-conf overrides each.
DEFAULT_CONF = {
    "spark.app.name": "jbodcheck",
    "spark.python.worker.reuse": "true",                  # off made tasks about 5 times costlier
    "spark.python.unix.domain.socket.enabled": "true",    # JVM <-> Python worker over Unix sockets
    "spark.shuffle.compress": "false",                    # fingerprints do not compress
    "spark.shuffle.spill.compress": "false",
    "spark.rdd.compress": "false",
    "spark.checkpoint.checkpointAllMarkedAncestors": "true",
    "spark.cleaner.periodicGC.interval": "1min",          # drop old levels' shuffle files sooner
    "spark.ui.showConsoleProgress": "false",
    "spark.log.level": "WARN",
}
# Only when Spark runs in this process's JVM (local master).
LOCAL_CONF = {
    "spark.ui.enabled": "false",
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1",   # C1 only: faster start, enough here
}

_MASTER = re.compile(
    r"^(local(\[(\*|[1-9][0-9]*)(,[1-9][0-9]*)?\])?"
    r"|local-cluster\[[1-9][0-9]*,[1-9][0-9]*,[1-9][0-9]*\]"
    r"|yarn"
    r"|[a-z][a-z0-9+.-]*://\S+)$"
)
_MASTER_FORMS = "local, local[N], local[*], spark://HOST:PORT, yarn or k8s://URL"


def check_master(master: str) -> None:
    """Reject a master URL Spark cannot parse; for spark://, check that each master answers on its port."""
    if not _MASTER.match(master):
        raise SparkSetupError(f"bad --master {master!r}: expected {_MASTER_FORMS}")
    if master.startswith("spark://"):
        for hostport in master[len("spark://"):].split(","):
            host, _, port = hostport.rpartition(":")
            if not host or not port.isdigit():
                raise SparkSetupError(f"bad --master {master!r}: expected spark://HOST:PORT[,HOST:PORT...]")
            try:
                socket.create_connection((host, int(port)), timeout=5).close()
            except OSError as e:
                reason = e.strerror or str(e) or type(e).__name__
                raise SparkSetupError(f"cannot reach the Spark master {hostport} (--master {master}): {reason}") \
                    from None


def is_local(master: str | None) -> bool:
    return master is not None and (master == "local" or master.startswith(("local[", "local-cluster[")))


# How a level survives the loss of an executor (docs/spark.md, "Executors lost"):
LOCAL_CHECKPOINT = "local-checkpoint"        # local master: the executor is this process's JVM, it cannot be lost
LINEAGE = "lineage"                          # a cluster without --checkpoint-dir: recomputed from level 0 at worst
RELIABLE_CHECKPOINT = "reliable-checkpoint"  # --checkpoint-dir: recomputed from the last reliable checkpoint


def recovery_for(master: str, checkpoint_dir: str | None) -> str:
    if checkpoint_dir is not None:
        return RELIABLE_CHECKPOINT
    return LOCAL_CHECKPOINT if is_local(master) else LINEAGE


def parse_conf(pairs) -> dict:
    """--spark-conf KEY=VALUE pairs as a dict (later ones win)."""
    conf = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key.startswith("spark.") or len(key) <= len("spark.") or any(c.isspace() for c in key):
            raise SparkSetupError(f"malformed --spark-conf {pair!r}: expected KEY=VALUE with a spark.* key")
        conf[key] = value
    return conf


def check_checkpoint_dir(path: str) -> str:
    """A usable checkpoint directory (created if missing), as an absolute path or URI.

    Local paths are checked here by writing a file; other file systems (hdfs://, s3a://, ...) are checked
    by Spark when the directory is set."""
    parsed = urlparse(path)
    if parsed.scheme and parsed.scheme != "file" and len(parsed.scheme) > 1:   # "C:" is not a scheme
        return path
    local = parsed.path if parsed.scheme == "file" else path
    local = os.path.abspath(os.path.expanduser(local))
    try:
        os.makedirs(local, exist_ok=True)
        with tempfile.TemporaryFile(dir=local):
            pass
    except OSError as e:
        reason = e.strerror or str(e)
        raise SparkSetupError(f"cannot use --checkpoint-dir {path}: {reason}") from None
    return local


def validate(options: SparkOptions) -> SparkOptions:
    """Check every option before Spark starts; returns the options with the checkpoint dir made absolute."""
    if options.master is not None:
        check_master(options.master)
    if options.partitions is not None and options.partitions < 1:
        raise SparkSetupError(f"--spark-partitions must be at least 1, not {options.partitions}")
    if options.checkpoint_every < 1:
        raise SparkSetupError(f"checkpoint_every must be at least 1, not {options.checkpoint_every}")
    if options.resume and options.checkpoint_dir is None:
        raise SparkSetupError("resuming a Spark search needs its checkpoint dir")
    if options.checkpoint_dir is not None:
        options = attrs.evolve(options, checkpoint_dir=check_checkpoint_dir(options.checkpoint_dir))
    check_python_settings(options.conf)
    return options


PYTHON = "spark.pyspark.python"                 # the executors' Python (session.py sets PYSPARK_PYTHON from it)
DRIVER_PYTHON = "spark.pyspark.driver.python"   # the driver's: outside spark-submit, this process


def under_spark_submit() -> bool:
    return "PYSPARK_GATEWAY_PORT" in os.environ


def check_python_settings(conf: dict) -> None:
    """spark-submit turns these two settings into PYSPARK_PYTHON and PYSPARK_DRIVER_PYTHON; a plain
    SparkContext reads neither. Outside spark-submit the executors' one is honoured (session.py) and the
    driver's must name this interpreter: the driver is this process, already running."""
    for key in (PYTHON, DRIVER_PYTHON):
        if key in conf and not conf[key].strip():
            raise SparkSetupError(f"--spark-conf {key}= needs a Python interpreter (a path or a command)")
    if DRIVER_PYTHON not in conf or under_spark_submit():
        return
    wanted = shutil.which(conf[DRIVER_PYTHON])
    if wanted is None or os.path.realpath(wanted) != os.path.realpath(sys.executable):
        raise SparkSetupError(f"--spark-conf {DRIVER_PYTHON}={conf[DRIVER_PYTHON]}: outside spark-submit the "
                              f"driver is this jbodcheck process ({sys.executable}); run jbodcheck with that "
                              f"interpreter instead ({conf[DRIVER_PYTHON]} -m explorer ...)")
