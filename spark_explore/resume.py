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

import importlib.metadata
import json
import os
import shutil

from .options import SparkSetupError

MANIFEST = "jbodcheck-spark-manifest.json"
FORMAT = 1
_MAX_BYTES = 8 << 20


def jbodcheck_version() -> str:
    """The installed jbodcheck's version (pyproject.toml: explorer/__init__.py's __version__); spark_explore
    imports nothing of explorer/, which holds it."""
    try:
        return importlib.metadata.version("jbodcheck")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def identity(model, invariants, all_violations: bool, partitions: int, version: str | None = None) -> dict:
    """What a checkpoint must match to be resumed (JSON-normalised, so that it compares with a read one).
    ``version``: jbodcheck's (default: the installed one's)."""
    return json.loads(json.dumps({
        "version": version or jbodcheck_version(), "model": model.cfg.as_dict(), "symmetry": model.symmetry,
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


def _read_json(path: str):
    """The JSON value of a manifest file; SparkSetupError (one line) when it cannot be read, is larger than
    _MAX_BYTES or is not JSON."""
    what = "Spark checkpoint manifest"
    try:
        with open(path, "rb") as f:
            raw = f.read(_MAX_BYTES + 1)
    except OSError as e:
        raise SparkSetupError(f"cannot read {what} {path}: {e.strerror or e}") from None
    if len(raw) > _MAX_BYTES:
        raise SparkSetupError(f"{what} {path} is larger than {_MAX_BYTES >> 20} MB: not a {what} file")
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, RecursionError, ValueError) as e:
        raise SparkSetupError(f"{what} {path} is not valid JSON: {' '.join(str(e).split())[:200]}") from None


def read_manifest(path: str) -> dict:
    manifest = _read_json(path)
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
