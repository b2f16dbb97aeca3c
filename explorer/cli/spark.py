"""What `jbodcheck explore --engine spark` adds to the CLI (docs/spark.md): the Spark options, checked before
Spark starts, its failures as one line, and the report's Spark section (the run: explorer/engine_runs.py).
spark_explore/ (the engine) and pyspark are imported only when --engine spark runs."""
from __future__ import annotations

import contextlib
import os

import click

from explorer import __version__
from explorer.engines import selectable
from explorer.errors import JbodcheckFailure

from .exits import BadInput
from .optional import needs

SPARK_OPTIONS = ("--master", "--spark-partitions", "--checkpoint-dir", "--spark-conf")


def spark_options(f):
    """The Spark engine's options (docs/spark.md); pyspark is imported only when --engine spark runs."""
    f = click.option("--spark-conf", "spark_conf", multiple=True, metavar="KEY=VALUE",
                     help="A Spark setting, e.g. spark.driver.memory=4g (repeatable).")(f)
    f = click.option("--checkpoint-dir", default=None, metavar="PATH",
                     help="A directory (shared on a cluster) for reliable checkpoints every few levels.")(f)
    f = click.option("--spark-partitions", type=click.IntRange(min=1), default=None, metavar="N",
                     help="Partitions of the frontier and visited set [default: executor cores].")(f)
    f = click.option("--master", default=None, metavar="URL",
                     help="The Spark master [default: local[*], or spark-submit's].")(f)
    return f


def options_from_cli(master, partitions, checkpoint_dir, conf_pairs, resume_path=None):
    """SparkOptions from the CLI's flags, checked before Spark starts (SparkSetupError: one line). ``--resume
    PATH``: PATH is the checkpoint dir of the search to go on with (spark_explore/resume.py); it is the
    checkpoint dir of this run too."""
    from spark_explore.options import SparkOptions, SparkSetupError, parse_conf, validate

    if resume_path is not None:
        if checkpoint_dir is not None and os.path.abspath(checkpoint_dir) != os.path.abspath(resume_path):
            raise SparkSetupError(f"--resume {resume_path} goes on in its own checkpoint dir: give no other "
                                  f"--checkpoint-dir ({checkpoint_dir})")
        checkpoint_dir = resume_path
    return validate(SparkOptions(master=master, partitions=partitions, checkpoint_dir=checkpoint_dir,
                                 conf=parse_conf(conf_pairs), resume=resume_path is not None,
                                 version=__version__))


def spark_setup(engine, master, partitions, checkpoint_dir, conf_pairs, resume_path=None) -> dict:
    """The settings of an engine that takes the Spark options (explorer/engines.py), checked before Spark
    starts: ``{"spark": SparkOptions}``; ``{}`` for the others, which refuse the Spark options."""
    given = master is not None or partitions is not None or checkpoint_dir is not None or conf_pairs
    if not engine.accepts("--master"):
        if given:
            takers = [e.name for e in selectable() if e.accepts("--master")]
            raise BadInput(f"--master, --spark-partitions, --checkpoint-dir and --spark-conf need --engine "
                           f"{' or '.join(takers)}")
        return {}
    from spark_explore import SparkSetupError

    with needs(f"--engine {engine.name}"):
        import pyspark  # noqa: F401 - before any work, not when Spark starts

    try:
        return {"spark": options_from_cli(master, partitions, checkpoint_dir, conf_pairs, resume_path)}
    except SparkSetupError as e:
        raise BadInput(str(e)) from None


@contextlib.contextmanager
def spark_errors():
    """Spark's failures as one line: during the search the checker failed (exit 3); Spark could not start with
    these options: bad input (exit 2)."""
    from spark_explore import SparkRunError, SparkSetupError

    try:
        yield
    except SparkRunError as e:
        raise JbodcheckFailure(str(e)) from None
    except SparkSetupError as e:
        raise BadInput(str(e)) from None


def annotate(report: dict, summary: str, result) -> tuple[dict, str]:
    """The JSON report gains a "spark" section (its "collision_probability" is the report's own, kept there
    for the readers of 0.3.1's reports); the text summary gains its notes."""
    from spark_explore import SparkSearchResult

    if not isinstance(result, SparkSearchResult):
        return report, summary
    info = result.spark
    report = {**report, "spark": info}
    # The collision estimate is in every engine's summary (and report's "collision_probability").
    lines = [summary, f"Spark: {info['partitions']} partitions on {info['master']}, {info['levels']} levels; "
                      f"recovery from a lost executor: {info['recovery']}."]
    lines.extend(f"Note: {note}" for note in info["notes"])
    return report, "\n".join(lines)
