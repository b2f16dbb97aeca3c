"""What `jbodcheck explore --engine spark` adds to the CLI: option handling and the report's Spark section."""
from __future__ import annotations

from .engine import SparkSearchResult, explore_spark
from .options import SparkOptions, parse_conf, validate

SPARK_OPTIONS = ("--master", "--spark-partitions", "--checkpoint-dir", "--spark-conf")


def options_from_cli(master, partitions, checkpoint_dir, conf_pairs) -> SparkOptions:
    """SparkOptions from the CLI's flags, checked before Spark starts (SparkSetupError: one line)."""
    return validate(SparkOptions(master=master, partitions=partitions, checkpoint_dir=checkpoint_dir,
                                 conf=parse_conf(conf_pairs)))


def run(model, invariants, options, spark: SparkOptions) -> SparkSearchResult:
    return explore_spark(model, invariants, options, spark)


def annotate(report: dict, summary: str, result) -> tuple[dict, str]:
    """The JSON report gains a "spark" section (its "collision_probability" is the report's own, kept there
    for the readers of 0.3.1's reports); the text summary gains its notes."""
    if not isinstance(result, SparkSearchResult):
        return report, summary
    info = result.spark
    report = {**report, "spark": info}
    # The collision estimate is in every engine's summary (and report's "collision_probability").
    lines = [summary, f"Spark: {info['partitions']} partitions on {info['master']}, {info['levels']} levels."]
    lines.extend(f"Note: {note}" for note in info["notes"])
    return report, "\n".join(lines)
