"""Resuming a Spark search from its --checkpoint-dir (docs/spark.md, "Checkpoints and resume").

At each reliable checkpoint the driver writes a small manifest, ``jbodcheck-spark-manifest.json``, into the
checkpoint directory (atomically): the identity of the search (version, model configuration, symmetry, plugin
features, invariants, --all-violations, partitions), the level, the path of that level's checkpointed RDD and
the counts, coverage and violation records so far. The previous checkpoint's files are then removed; a run
that completes removes its manifest and files. ``--resume`` reads the manifest back, refuses another
configuration (bad input), and the search goes on from the level after it. Local (or mounted) directories
only: a manifest is not written to hdfs:// and other URIs.

The two record functions at the end run in the executors (re-keying the restored level by partition).
"""
from __future__ import annotations

import json
import os
import shutil

from model.spec.jsonfile import read_json

from .options import SparkSetupError

MANIFEST = "jbodcheck-spark-manifest.json"
FORMAT = 1
_MAX_BYTES = 8 << 20


def identity(model, invariants, all_violations: bool, partitions: int, version: str) -> dict:
    """What a checkpoint must match to be resumed (JSON-normalised, so that it compares with a read one);
    ``version``: jbodcheck's, as its caller knows it (SparkOptions.version)."""
    return json.loads(json.dumps({
        "version": version, "model": model.cfg.as_dict(), "symmetry": model.symmetry,
        "plugins": [f.name for f in model.plugin_features], "invariants": [inv.id for inv in invariants],
        "all_violations": bool(all_violations), "partitions": partitions}))


def is_local_dir(directory: str) -> bool:
    return "://" not in directory


def write(directory: str, manifest: dict) -> None:
    """Write the manifest atomically, then remove the files of the checkpoint it replaces."""
    path = os.path.join(directory, MANIFEST)
    previous = _read_quietly(path)
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"format": FORMAT, **manifest}, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    if previous and previous.get("rdd") != manifest["rdd"]:
        remove_rdd(previous.get("rdd"))


def remove(directory: str, app_dir: str | None) -> None:
    """A completed run: its manifest, the checkpoint it names and this application's checkpoints go."""
    path = os.path.join(directory, MANIFEST)
    manifest = _read_quietly(path)
    if manifest:
        remove_rdd(manifest.get("rdd"))
        os.unlink(path)
    if app_dir and app_dir.startswith("file:"):
        shutil.rmtree(app_dir[len("file:"):], ignore_errors=True)


def remove_rdd(rdd_path) -> None:
    """One checkpointed RDD's directory, and the application's directory above it once it is empty."""
    if not isinstance(rdd_path, str) or not rdd_path.startswith("file:"):
        return
    local = rdd_path[len("file:"):]
    shutil.rmtree(local, ignore_errors=True)
    try:
        os.rmdir(os.path.dirname(local))
    except OSError:
        pass


def _read_quietly(path: str) -> dict | None:
    try:
        return read_manifest(path)
    except SparkSetupError:
        return None


def read_manifest(path: str) -> dict:
    try:
        manifest = read_json(path, "Spark checkpoint manifest", _MAX_BYTES)
    except ValueError as e:
        raise SparkSetupError(str(e)) from None
    needed = {"format", "identity", "level", "rdd", "distinct", "generated", "coverage", "depth", "found"}
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or not needed <= manifest.keys():
        raise SparkSetupError(f"{path} is not a Spark checkpoint manifest of format {FORMAT}")
    return manifest


def read(directory: str) -> dict:
    """The manifest to resume from ``directory`` (SparkSetupError: bad input)."""
    if not is_local_dir(directory):
        raise SparkSetupError(f"resuming needs a local or mounted --checkpoint-dir, not {directory}")
    path = os.path.join(directory, MANIFEST)
    if not os.path.exists(path):
        raise SparkSetupError(f"no Spark checkpoint to resume in {directory} (no {MANIFEST}: the run completed, "
                              f"or wrote no reliable checkpoint yet)")
    manifest = read_manifest(path)
    if not isinstance(manifest["identity"], dict):
        raise SparkSetupError(f"{path} is not a Spark checkpoint manifest of format {FORMAT}")
    return manifest


def check(directory: str, manifest: dict, expected: dict, max_depth: int | None, max_states: int | None) -> None:
    """Refuse (SparkSetupError: bad input) a checkpoint of another search, or one already past the bounds."""
    saved = manifest["identity"]
    differ = sorted(k for k in expected.keys() | saved.keys() if k != "model" and expected.get(k) != saved.get(k))
    model, saved_model = expected["model"], saved.get("model") or {}
    differ += sorted(f"model.{k}" for k in model.keys() | saved_model.keys() if model.get(k) != saved_model.get(k))
    if differ:
        raise SparkSetupError(f"the checkpoint in {directory} is of another search: it differs in {', '.join(differ)}")
    level, distinct = manifest["level"], manifest["distinct"]
    if (max_depth is not None and max_depth <= level) or (max_states is not None and max_states <= distinct):
        raise SparkSetupError(f"the checkpoint in {directory} is at level {level} with {distinct:,} distinct "
                              f"states: already at --max-depth or --max-states")


def keyed_by_partition(index, records):
    return ((index, record) for record in records)


def values(pairs):
    return (record for _, record in pairs)
