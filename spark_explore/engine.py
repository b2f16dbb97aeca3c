"""The driver of the Spark engine: a level-synchronous BFS whose levels are RDDs partitioned by fingerprint.

Per level the driver builds one RDD and runs one Spark job on it; it receives only per-partition counts (an
accumulator keyed by level and partition) and never collects a level or the visited set. For a violation it
walks the parent links back, one look-up of one fingerprint in one partition per step, and re-derives the
states of the path with the model (docs/spark.md).

It imports the kernel (model/spec) and invariants.plugins, never the explorer: its caller hands it the model,
the signal handling to use (``signals``: explorer/signals.py for the CLI) and, optionally, how the executors
rebuild the model (``rebuild``).
"""
from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import sys
import threading
import time
from functools import partial
from typing import Callable

import attrs

from invariants.plugins import Plugins
from model.spec.engine import (SearchResult, TransitionCounts, Violation, collision_probability, rebuild_trace,
                               result_status, stops_search)
from model.spec.model import Action, Model

from . import resume, worker
from .bound import SmallestNew, cap_for
from .options import LOCAL_CHECKPOINT, RELIABLE_CHECKPOINT, SparkOptions, SparkSetupError, recovery_for, validate
from .session import SparkHandle, keep_logs, one_line, start

ENGINE = "spark"


class SparkRunError(SparkSetupError):
    """Spark failed during the search (a lost JVM, a failed task): one line for the user."""


@attrs.define
class SparkSearchResult(SearchResult):
    """A SearchResult (report_dict and summary_text take it as is) plus what only the Spark engine knows."""
    spark: dict = attrs.Factory(dict)


class NoSignals:
    """The signal handling of a caller that has none (a library use, a test): nothing is caught, no test
    points. The CLI passes explorer/signals.py instead, which has the same names."""
    INTERRUPTS = (KeyboardInterrupt,)
    TEST_ENV = ""                         # no such environment variable
    stopping = threading.Event()          # never set

    @staticmethod
    def interruptible(raising: bool = True):
        return contextlib.nullcontext()

    @staticmethod
    def interrupt_signal(error: BaseException) -> int:
        return signal.SIGINT

    @staticmethod
    def received():
        return None

    @staticmethod
    def test_point(name: str) -> None:
        return None

    @staticmethod
    def reclaim() -> None:
        return None


class _Stopped(Exception):
    """Raised at a safe point of the search (between py4j calls) once a signal came."""


def _quiet_py4j() -> None:
    """A job cancelled on a signal (and, should one still land there, a KeyboardInterrupt inside a py4j call)
    makes py4j and pyspark log tracebacks; the search reports the interruption itself."""
    for name in ("py4j", "py4j.java_gateway", "py4j.clientserver", "pyspark"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    root = logging.getLogger()
    if _py4j_interrupt_record not in root.filters:
        root.addFilter(_py4j_interrupt_record)   # py4j logs this one on the root logger, with a traceback


def _py4j_interrupt_record(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith("KeyboardInterrupt while sending command")


def explore_spark(model: Model, invariants: list, options, spark: SparkOptions | None = None, *,
                  sc=None, on_level: Callable[[dict], None] | None = None, signals=NoSignals,
                  rebuild: Callable[[], Model] | None = None) -> SparkSearchResult:
    """Exhaust the model level by level on Spark. ``options``: the search's options (explorer.search
    SearchOptions: max_depth, max_states, all_violations, progress); ``sc``: an existing SparkContext (else one is
    started from ``spark`` and stopped at the end); ``on_level``: called after each level with its figures
    (benchmarks); ``signals``: the caller's signal handling (explorer/signals.py; default: none); ``rebuild``: a
    picklable function that builds the same model in an executor (default: the model's design with its
    configuration, features and invariants, shipped by value)."""
    rebuild = rebuild or rebuild_of(model, invariants)
    # SIGINT and SIGTERM only set a flag from here to the end (explorer/signals.py): an exception raised inside a
    # py4j call would leave its connection out of step. The search looks at the flag between its Spark calls.
    with signals.interruptible(raising=False):
        return _explore(model, invariants, options, validate(spark or SparkOptions()), sc, on_level, signals,
                        rebuild)


def rebuild_of(model: Model, invariants: list) -> Callable[[], Model]:
    """A picklable function that builds ``model`` again (in an executor): its design, configuration, symmetry,
    plugin features and invariants."""
    return partial(Model, model.cfg, model.symmetry, design=model.design,
                   plugins=Plugins(features=tuple(model.plugin_features)), invariants=list(invariants))


def _explore(model, invariants, options, spark: SparkOptions, sc, on_level, signals, rebuild) -> SparkSearchResult:
    started = time.monotonic()
    _quiet_py4j()
    signals.test_point("spark-start")
    handle = SparkHandle(sc, owned=False) if sc is not None else start(spark, signals.reclaim)
    signals.reclaim()           # a new SparkContext sets its own SIGINT handler (which calls the JVM)
    search = None
    try:
        if spark.checkpoint_dir is not None:
            try:
                handle.sc.setCheckpointDir(spark.checkpoint_dir)
            except Exception as e:  # noqa: BLE001 - e.g. an unreachable HDFS
                raise SparkSetupError(f"cannot use --checkpoint-dir {spark.checkpoint_dir}: {one_line(e)}") from None
        search = _Search(handle, model, invariants, options, spark, on_level, started, signals, rebuild)
        result = search.run()
        signals.test_point("search-end")
        return result
    except SparkSetupError:
        raise
    except Exception as e:
        if search is not None and signals.received() is not None:
            return search.interrupted()  # a failure on the way out of an interrupted search (a cancelled job)
        if not _is_spark_error(e):
            raise
        keep_logs()
        where = f" (Spark's log: {handle.log_path})" if handle.log_path else ""
        reached = search.reached() if search is not None else ""
        raise SparkRunError(f"the Spark search failed{reached}: {_failure_line(e)}{where}") from None
    finally:
        signals.test_point("spark-stop")
        handle.stop()


def _is_spark_error(error: BaseException) -> bool:
    names = {c.__module__.split(".")[0] for c in type(error).__mro__}
    return bool(names & {"py4j", "pyspark"})


def _failure_line(error: BaseException) -> str:
    """For a failed Python task, the Python exception's last line; else the first line of the message."""
    text = str(getattr(error, "java_exception", None) or error)
    if "Traceback (most recent call last)" in text:
        lines = text.splitlines()
        start = max(i for i, line in enumerate(lines) if "Traceback (most recent call last)" in line)
        last = None
        for line in lines[start + 1:]:
            if line.startswith(("\tat ", "\t... ")):
                break
            if line.strip() and not line.startswith(" "):
                last = line.strip()
        if last:
            return last
    line = one_line(error)
    lost = _LOST_TASK.search(line)
    if lost:      # "Job aborted due to stage failure: Task 1 in stage 3.0 failed 1 times, most recent ...: why"
        return f"a task failed {lost.group(1)} time(s): {lost.group(2).split('. ')[0]}"
    return line


_LOST_TASK = re.compile(r"failed (\d+) times?, most recent failure: Lost task [^:]*: (?:[\w.$]+(?:Exception|Error): )?(.+)")


def _ship_by_value(invariants, features=()) -> None:
    """Invariants and features from modules the executors do not have (plugins, tests) travel with the tasks,
    by value."""
    from pyspark import cloudpickle

    functions = [inv.check for inv in invariants] + [r.effect for f in features for r in f.rules]
    for fn in functions:
        name = getattr(fn, "__module__", None)
        if not name or name == "__main__" or name.split(".")[0] in ("invariants", "model"):
            continue
        module = sys.modules.get(name)
        if module is not None:
            cloudpickle.register_pickle_by_value(module)


class _Search:
    def __init__(self, handle: SparkHandle, model: Model, invariants: list, options, spark: SparkOptions,
                 on_level, started: float, signals, rebuild):
        self.sc, self.handle = handle.sc, handle
        self.signals, self.rebuild = signals, rebuild
        self.model, self.invariants, self.options, self.spark = model, list(invariants), options, spark
        self.on_level, self.started = on_level, started
        self.resumed = resume.read(spark.checkpoint_dir) if spark.resume else None
        default = self.resumed["identity"].get("partitions") if self.resumed else self.sc.defaultParallelism
        self.partitions = spark.partitions or max(1, default if isinstance(default, int) else 1)
        self.identity = resume.identity(model, invariants, options.all_violations, self.partitions, spark.version)
        if self.resumed is not None:
            resume.check(spark.checkpoint_dir, self.resumed, self.identity, options.max_depth, options.max_states)
        self.recovery = recovery_for(self.sc.master, spark.checkpoint_dir)
        self.manifests = self.recovery == RELIABLE_CHECKPOINT and resume.is_local_dir(spark.checkpoint_dir)
        # What the last complete level reached (for an interrupt or a failure).
        self.done = {"distinct": 0, "generated": 0, "coverage": [0] * len(model.rules), "depth": 0,
                     "levels": 0, "found": {}, "prev": None}
        # Hashable (the executors cache a model per key): the frozen configuration and the symmetry in use.
        # The plugins' features travel with the tasks (by value, _ship_by_value); the key names them.
        self.model_key = (model.cfg, model.symmetry, tuple(f.name for f in model.plugin_features))
        self.features = model.plugin_features
        self.job_group = f"jbodcheck-{id(self):x}"
        self.canceller: threading.Thread | None = None

    # -- one level -------------------------------------------------------------------------------------
    def _level_rdd(self, level: int, prev, failed: frozenset, expand: bool, stats, cap: int | None = None):
        from pyspark import StorageLevel

        sc, parts = self.sc, self.partitions
        if prev is None:
            init = self.model.init_states()[0]
            fp = self.model.fingerprint(init)
            block = worker.pack_block([fp], [0], [worker.NO_ACTION], [init])
            source = sc.parallelize([(worker.owner(fp, parts), block)], 1).partitionBy(parts, worker.route)
        else:
            # The candidates move to their owners; the visited set stays where it is: both sides have the
            # same partitioner (same function, same count), so Spark unions partition i with partition i.
            shuffled = prev.flatMap(worker.outgoing).partitionBy(parts, worker.route)
            source = self._aligned_union(prev, shuffled, level)
        fn = worker.LevelPass(self.model_key, self.rebuild, self.invariants, failed, level, parts, expand, stats,
                              cap)
        out = source.mapPartitionsWithIndex(fn, preservesPartitioning=True)
        # Persist first: Python-side, a localCheckpoint alone would let the next level pipeline into (and so
        # recompute) this pass instead of reading the checkpointed blocks.
        out.persist(StorageLevel.MEMORY_AND_DISK)
        if self.recovery == LOCAL_CHECKPOINT:
            out.localCheckpoint()
        elif self.recovery == RELIABLE_CHECKPOINT and level % self.spark.checkpoint_every == 0:
            out.checkpoint()            # reliable: a lost executor costs a recomputation from here
        return out                      # LINEAGE (and between reliable checkpoints): persisted only

    def _aligned_union(self, left, right, level: int):
        """The union of two RDDs with the one partitioner, partition i beside partition i (nothing moves)."""
        from pyspark import RDD

        union = RDD(left._jrdd.union(right._jrdd), self.sc, left._jrdd_deserializer)
        union.partitioner = right.partitioner or left.partitioner
        if union.getNumPartitions() != self.partitions:   # Spark fell back to a plain union: a bug
            raise RuntimeError(f"the union of level {level} has {union.getNumPartitions()} partitions, "
                               f"not {self.partitions}: the partitioners differ")
        return union

    def _level(self, level: int, prev, failed: frozenset, expand: bool, cap: int | None = None):
        """Run one level (one Spark job): its RDD and its per-partition figures."""
        self._check()
        self.signals.test_point("level-start")
        stats_acc = self.sc.accumulator({}, worker.StatsParam())
        out = self._level_rdd(level, prev, failed, expand, stats_acc, cap)
        if self.signals.TEST_ENV in os.environ:
            self._signal_in_job()
        out._jrdd.count()          # the level's one job (JVM-side count: no extra Python pass)
        self._check()
        values = stats_acc.value
        missing = [i for i in range(self.partitions) if (level, i) not in values]
        if missing:
            raise RuntimeError(f"level {level}: no counts from partition(s) {missing}")
        return out, [values[(level, i)] for i in range(self.partitions)]

    def _cap(self, prev, out, level: int, remaining: int) -> int | None:
        """The largest fingerprint among the ``remaining`` smallest new fingerprints of a level (bound.py)."""
        both = out if prev is None else self._aligned_union(prev, out, level)
        smallest = both.mapPartitions(SmallestNew(remaining)).collect()
        self._check()
        return cap_for(smallest, remaining)

    def _signal_in_job(self) -> None:
        """Tests only: the ``job-running`` point of JBODCHECK_TEST_SIGNAL, reached once Spark runs the level's
        job (seen from another thread, as a user's Ctrl-C would come)."""
        tracker = self.sc.statusTracker()

        def watch():
            for _ in range(2000):
                if tracker.getActiveJobsIds():
                    self.signals.test_point("job-running")
                    return
                time.sleep(0.005)

        threading.Thread(target=watch, daemon=True).start()

    # -- the search ------------------------------------------------------------------------------------
    def run(self) -> SparkSearchResult:
        """The search; SIGINT or SIGTERM ends it with result "interrupted" and the last complete level's counts
        (the caller stops the SparkContext). The signal handler only sets a flag (explorer/signals.py); a
        thread cancels the search's running job, and the search stops at its next safe point (``_check``)."""
        self.sc.setJobGroup(self.job_group, "jbodcheck explore", False)
        finished = threading.Event()
        self.canceller = threading.Thread(target=self._cancel_on_signal, args=(finished,),
                                          name="jbodcheck-spark-canceller", daemon=True)
        self.canceller.start()
        try:
            self.signals.test_point("search-start")
            self._check()
            return self._run()
        except _Stopped:
            return self.interrupted()
        except self.signals.INTERRUPTS as e:          # raised by a caller's own code (on_level, its own handler)
            return self.interrupted(self.signals.interrupt_signal(e))
        except Exception:
            if self.signals.received() is not None:   # the cancelled job failed: the interruption, not a failure
                return self.interrupted()
            raise
        finally:
            finished.set()
            # The caller's next job on this thread must not be in the search's group: Spark remembers a cancelled
            # group and cancels the jobs submitted in it later too (a job run right after an interrupted search
            # failed with SPARK_JOB_CANCELLED, tests/engines/test_signals.py level-done#3).
            self.sc.setLocalProperty("spark.jobGroup.id", None)

    def _check(self) -> None:
        """A safe point (no py4j call under way): stop here if a signal came."""
        if self.signals.received() is not None:
            raise _Stopped()

    def _cancel_on_signal(self, finished: threading.Event) -> None:
        """On the first signal, cancel the search's Spark jobs (from this thread, with its own py4j connection:
        the main thread may be waiting inside a call), so that a long level stops within about a second."""
        while not self.signals.stopping.wait(0.05):
            if finished.is_set():
                return
        try:
            self.sc.cancelJobGroup(self.job_group)
        except Exception:  # noqa: BLE001 - the context is stopping anyway: the search stops at its next check
            pass

    def reached(self) -> str:
        """How far the search got, for the one line of a failure (no report is written: docs/cli.md)."""
        done = self.done
        return (f" after {done['levels']} complete level(s), {done['distinct']:,} distinct states, depth "
                f"{done['depth']}")

    def interrupted(self, signum: int | None = None) -> SparkSearchResult:
        """The partial result: the last complete level's counts, and the violations it had found."""
        signum = self.signals.received() or signum
        done = self.done
        violations = []
        if done["found"]:
            if self.canceller is not None:
                self.canceller.join(timeout=10)     # its cancel must not hit the look-ups below
            try:                     # what the levels that completed found (Spark may refuse new jobs by now)
                violations = [v for _, v in self._violations(done["prev"], done["found"], True, safe=False)]
            except Exception:  # noqa: BLE001
                violations = []
        counts = TransitionCounts(self.model)
        counts.add(done["generated"], done["coverage"])
        info = self._info(done["levels"], done["distinct"],
                          ["Stopped by a signal: the counts are those of the last complete level."])
        return SparkSearchResult(engine=ENGINE, result="interrupted",
                                 distinct_states=done["distinct"], states_generated=done["generated"],
                                 depth=done["depth"], elapsed_s=round(time.monotonic() - self.started, 3),
                                 coverage=counts.coverage_dict(), violations=violations, spark=info, signal=signum)

    def _info(self, levels: int, distinct: int, notes: list) -> dict:
        return {"master": self.sc.master, "partitions": self.partitions, "levels": levels,
                "checkpoint_dir": self.spark.checkpoint_dir, "recovery": self.recovery,
                "fingerprint_bits": 64, "collision_probability": collision_probability(distinct), "notes": notes}

    def _run(self) -> SparkSearchResult:
        _ship_by_value(self.invariants, self.features)
        model, options = self.model, self.options
        max_depth, max_states = options.max_depth, options.max_states
        counts = TransitionCounts(model)
        distinct = 0
        found: dict[str, tuple] = {}          # invariant id -> its first violation record
        prev = None
        depth = level = 0
        bounded = truncated = False
        stop_reason = None
        levels = 0
        if self.resumed is not None:          # go on after the level of the manifest (resume.py)
            prev, found = self._resume(counts)
            done = self.done
            level, levels, distinct, depth = done["levels"], done["levels"], done["distinct"], done["depth"]
        failed: set[str] = set(found)
        while True:
            level_started = time.monotonic()
            expand = max_depth is None or level < max_depth
            out, stats = self._level(level, prev, frozenset(failed), expand)
            new = sum(s["new"] for s in stats)
            if max_states is not None and distinct + new >= max_states and (expand or distinct + new > max_states):
                # The level reaches the bound: run it again, keeping the states with the smallest fingerprints
                # up to the bound exactly, checked but not expanded (as the last level of --max-depth).
                remaining = max_states - distinct
                cap = self._cap(prev, out, level, remaining) if distinct + new > max_states else None
                out.unpersist(blocking=False)
                out, stats = self._level(level, prev, frozenset(failed), False, cap)
                truncated = True
            if prev is not None:
                prev.unpersist(blocking=False)
            prev = out
            new = sum(s["new"] for s in stats)
            emitted = sum(s["emitted"] for s in stats)
            distinct += new
            for s in stats:
                counts.add(s["generated"], s["coverage"])
            generated = counts.generated
            records = sorted(r for s in stats for r in s["violations"])
            for record in records:
                inv_id = self.invariants[record[4]].id
                if inv_id not in found:
                    found[inv_id] = record
            failed.update(found)
            if new:
                depth = level
            seconds = time.monotonic() - level_started
            figures = {"level": level, "frontier": new, "distinct": distinct, "generated": generated,
                       "emitted": emitted, "seconds": seconds, "elapsed": time.monotonic() - self.started,
                       "partitions": stats}
            levels += 1
            self.done = {"distinct": distinct, "generated": generated, "coverage": list(counts.coverage),
                         "depth": depth, "levels": levels, "found": dict(found), "prev": prev}
            self.signals.test_point("level-done")
            if self.manifests and level % self.spark.checkpoint_every == 0:
                resume.write(self.spark.checkpoint_dir, {
                    "identity": self.identity, "level": level, "rdd": out.getCheckpointFile(),
                    "distinct": distinct, "generated": generated, "coverage": list(counts.coverage),
                    "depth": depth, "found": sorted(found.values())})
            if options.progress is not None:
                options.progress(f"level {level}  frontier {new:,}  distinct {distinct:,}  {seconds:.2f}s  "
                                 f"(total {figures['elapsed']:.1f}s)")
            if self.on_level is not None:
                self.on_level(figures)

            if stops_search(found, len(self.invariants), options.all_violations):
                stop_reason = "violation"
                break
            if new == 0:
                break
            if max_depth is not None and level >= max_depth:
                bounded = True
                break
            if max_states is not None and distinct >= max_states:
                bounded, stop_reason = True, "max_states"
                break
            if emitted == 0:
                break
            level += 1

        self._check()
        violations = self._violations(prev, found, options.all_violations)
        if self.manifests:
            app_dir = self.sc._jsc.sc().getCheckpointDir()
            resume.remove(self.spark.checkpoint_dir, app_dir.get() if app_dir.isDefined() else None)
        if stop_reason == "violation":
            depth = max(v_depth for v_depth, _ in violations)
        result_violations = [v for _, v in violations]
        notes = []
        if stop_reason == "violation":
            notes.append("The Spark engine finishes the level in which it finds a violation, so its distinct and "
                         "generated counts (and coverage) can differ from those of the local BFS, which stops at "
                         "the violating transition; the trace is as short as BFS's.")
        if truncated:
            notes.append(f"Stopped at --max-states {max_states:,}: the last level keeps its new states with the "
                         f"smallest fingerprints, checked but not expanded.")
        elapsed = round(time.monotonic() - self.started, 3)
        return SparkSearchResult(engine=ENGINE, result=result_status(result_violations, bounded),
                                 distinct_states=distinct, states_generated=counts.generated, depth=depth,
                                 elapsed_s=elapsed, coverage=counts.coverage_dict(), violations=result_violations,
                                 spark=self._info(levels, distinct, notes))

    def _resume(self, counts: TransitionCounts):
        """The level of the manifest, read back, and its violation records; its counts go to ``counts`` and to
        ``self.done``."""
        saved = self.resumed
        prev = self._restored(saved["rdd"])
        counts.add(saved["generated"], saved["coverage"])
        found = {self.invariants[r[4]].id: tuple(r) for r in saved["found"]}
        self.done = {"distinct": saved["distinct"], "generated": counts.generated, "coverage": list(counts.coverage),
                     "depth": saved["depth"], "levels": saved["level"] + 1, "found": dict(found), "prev": prev}
        if self.options.progress is not None:
            self.options.progress(f"resuming after level {saved['level']}  distinct {saved['distinct']:,}  "
                                  f"(checkpoint in {self.spark.checkpoint_dir})")
        return prev, found

    def _restored(self, rdd_path: str):
        """A checkpointed level read back, re-keyed to this run's partitioner (one shuffle; partition i stays i)."""
        from pyspark import StorageLevel

        loaded = self.sc._checkpointFile(rdd_path, self.sc.serializer)
        if loaded.getNumPartitions() != self.partitions:
            raise SparkSetupError(f"the checkpoint {rdd_path} has {loaded.getNumPartitions()} partitions, "
                                  f"not {self.partitions}")
        restored = (loaded.mapPartitionsWithIndex(resume.keyed_by_partition).partitionBy(self.partitions, worker.route)
                    .mapPartitions(resume.values, preservesPartitioning=True))
        return restored.persist(StorageLevel.MEMORY_AND_DISK)

    # -- counterexamples -------------------------------------------------------------------------------
    def _violations(self, out, found: dict, all_violations: bool, safe: bool = True) -> list:
        """[(depth, Violation)]: with all_violations, each invariant's first; else those at the first site.
        ``safe``: stop at a signal between two look-ups (not when writing an interrupted search's report)."""
        if not found:
            return []
        records = sorted(found.values())
        if not all_violations:
            site = records[0][:4]
            records = [r for r in records if r[:4] == site]
        by_pos = {k: inv for k, inv in enumerate(self.invariants)}
        result = []
        for v_depth, target, parent, action, pos, message in records:
            if self.invariants[pos].kind == "transition":
                actions = self._path(out, parent, v_depth - 1, safe) + [action]
            else:
                actions = self._path(out, target, v_depth, safe)
            trace = rebuild_trace(self.model, [self._action(a) for a in actions])
            if self.model.fingerprint(trace[-1][1]) != target:
                raise RuntimeError(f"the rebuilt trace of {by_pos[pos].id} does not end in the violating state "
                                   f"(a fingerprint collision?)")
            result.append((v_depth, Violation(by_pos[pos], message, trace)))
        return result

    def _path(self, out, fp: int, steps: int, safe: bool = True) -> list[int]:
        """The action numbers from the initial state to fp (steps long): one look-up per step."""
        actions = []
        for _ in range(steps):
            if safe:
                self._check()
            links = self.sc.runJob(out, worker.Lookup(fp), [worker.owner(fp, self.partitions)])
            if not links:
                raise RuntimeError(f"fingerprint {fp:#018x} is not in the visited set")
            fp, action = links[0]
            actions.append(action)
        return actions[::-1]

    def _action(self, index: int) -> Action:
        rule_index, _rule, args = self.model.action_space[index]
        return Action(rule_index, args)
