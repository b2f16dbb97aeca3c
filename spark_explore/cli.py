"""What `jbodcheck explore --engine spark` adds to the CLI: option handling and the report's Spark section."""
from __future__ import annotations

import os

from .engine import SparkSearchResult, explore_spark
from .options import SparkOptions, SparkSetupError, parse_conf, validate

SPARK_OPTIONS = ("--master", "--spark-partitions", "--checkpoint-dir", "--spark-conf")


def options_from_cli(master, partitions, checkpoint_dir, conf_pairs, resume_path=None) -> SparkOptions:
    """SparkOptions from the CLI's flags, checked before Spark starts (SparkSetupError: one line). ``--resume
    PATH``: PATH is the checkpoint dir of the search to go on with (spark_explore/resume.py); it is the
    checkpoint dir of this run too."""
    if resume_path is not None:
        if checkpoint_dir is not None and os.path.abspath(checkpoint_dir) != os.path.abspath(resume_path):
            raise SparkSetupError(f"--resume {resume_path} goes on in its own checkpoint dir: give no other "
                                  f"--checkpoint-dir ({checkpoint_dir})")
        checkpoint_dir = resume_path
    return validate(SparkOptions(master=master, partitions=partitions, checkpoint_dir=checkpoint_dir,
                                 conf=parse_conf(conf_pairs), resume=resume_path is not None))


def run(model, invariants, options, spark: SparkOptions) -> SparkSearchResult:
    """The Spark search with the CLI's signal handling; the executors rebuild the model through the catalog."""
    from functools import partial

    from explorer import signals
    from explorer.catalog import build_model
    from invariants.plugins import Plugins

    rebuild = partial(build_model, model.cfg, symmetry=model.symmetry,
                      plugins=Plugins(features=tuple(model.plugin_features)), invariants=list(invariants))
    return explore_spark(model, invariants, options, spark, signals=signals, rebuild=rebuild)


def annotate(report: dict, summary: str, result) -> tuple[dict, str]:
    """The JSON report gains a "spark" section (its "collision_probability" is the report's own, kept there
    for the readers of 0.3.1's reports); the text summary gains its notes."""
    if not isinstance(result, SparkSearchResult):
        return report, summary
    info = result.spark
    report = {**report, "spark": info}
    # The collision estimate is in every engine's summary (and report's "collision_probability").
    lines = [summary, f"Spark: {info['partitions']} partitions on {info['master']}, {info['levels']} levels; "
                      f"recovery from a lost executor: {info['recovery']}."]
    lines.extend(f"Note: {note}" for note in info["notes"])
    return report, "\n".join(lines)
