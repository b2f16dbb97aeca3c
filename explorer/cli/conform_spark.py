"""`jbodcheck conform --spark`: a campaign's traces as Spark tasks (docs/conform.md, "On Spark").

The driver chooses every trace (the seed fixes them, as without Spark) and submits each as a job of one task; the
task, on its executor, builds the campaign's models and runs the trace on a loopback cluster of its own
(realkafka.campaign.campaign.run_job), and returns the trace's result and rule counts. ``--parallel K`` jobs are
in flight at once (Spark runs as many as its executors have cores). The executors need the Kafka cache (``jbodcheck
kafka fetch``), Java 17 and this package, as the state search's executors need the package.

A task's clusters live under a directory of the campaign (``TMPDIR`` on the executor), which the driver removes at
the end: an interrupt cancels the jobs and stops Spark, the executors' Python workers end, and with them their
clusters' JVMs (each JVM dies with the thread that started it: realkafka/cluster/processes.py)."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

_built: dict = {}           # on an executor: (parameters) -> (models, start_cluster), for the reused Python worker


def _parts(params: dict):
    key = repr(sorted(params.items()))
    if key not in _built:
        from .conform_parts import campaign_parts

        _built.clear()
        _built[key] = campaign_parts(params["preset"], params["releases"], kafka_timers=params["kafka_timers"],
                                     kafka_defaults=params.get("kafka_defaults", False),
                                     format_each=params["format_each"],
                                     no_class_sharing=params["no_class_sharing"])
    return _built[key]


def run_task(params: dict, job):
    """On an executor: run one chosen trace on a cluster of its own; (TraceResult, rule counts)."""
    from realkafka.campaign.campaign import run_job

    os.makedirs(params["tmp"], exist_ok=True)
    os.environ["TMPDIR"] = params["tmp"]
    tempfile.tempdir = None                 # (mkdtemp reads TMPDIR again)
    models, start_cluster, cluster_has = _parts(params)
    return run_job(job, model=models[job.release][0], start_cluster=start_cluster, step_timeout=params["step_timeout"],
                   shrink_budget=params["shrink"], faults=params["faults"], cluster_has=cluster_has,
                   out=Path(params["out"]), seed=params["seed"], model_params=lambda r: models[r][1])


class SparkRunner:
    """run_campaign's ``runner``: each trace a Spark job of one task."""

    def __init__(self, params: dict, master: str | None):
        from explorer import signals
        from spark_explore.options import SparkOptions
        from spark_explore.session import start

        self.tmp = tempfile.mkdtemp(prefix="jbodcheck-conform-spark-")
        self.params = {**params, "tmp": self.tmp}
        self.handle = start(SparkOptions(master=master), signals.reclaim)
        signals.reclaim()

    def __call__(self, job):
        params = self.params
        return self.handle.sc.parallelize([job], 1).map(lambda j: run_task(params, j)).collect()[0]

    def cancel(self) -> None:
        try:
            self.handle.sc.cancelAllJobs()
        except Exception:  # noqa: BLE001 - the JVM may be gone already; stop() ends it either way
            pass

    def stop(self) -> None:
        self.handle.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)
