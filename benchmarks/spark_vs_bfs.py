"""Local BFS against the Spark engine on one preset: wall times, per-level overhead, peak memory of the driver,
the JVM and the Python workers, and the driver's memory level by level (it must stay flat while the visited
set grows). Each engine runs in its own process. Not a test: figures vary with the machine (docs/spark.md).

    python3 benchmarks/spark_vs_bfs.py                              # medium, Spark on local[2]
    python3 benchmarks/spark_vs_bfs.py small --master 'local[2]' --set max_faults=3 --json out.json
    python3 benchmarks/spark_vs_bfs.py medium --max-depth 16 --bfs-first   # 1,486,883 states, unreduced
    python3 benchmarks/spark_vs_bfs.py medium --max-depth 16 --bfs-first --bfs-workers 2   # BFS on the same 2 cores

Both engines run without dir symmetry unless --symmetry is given. The table gives each engine's CPU seconds
per distinct state (the Spark engine's: its Python workers, JVM and driver together).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import threading
import time
from explorer.catalog import build_model

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MB = 1024 * 1024


# -- /proc helpers (Linux) -------------------------------------------------------------------------------

def _status(pid: int) -> dict:
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                out[key] = value.strip()
    except OSError:
        pass
    return out


def _kb(value: str | None) -> float:
    return int(value.split()[0]) / 1024 if value else 0.0


def _children(pid: int) -> list[int]:
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out.extend(int(c) for c in f.read().split())
    except OSError:
        pass
    return out


def _cpu_s(pid: int) -> float:
    """User plus system CPU seconds of a process (and of its children it has waited for)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _descendants(pid: int) -> list[int]:
    todo, seen = [pid], []
    while todo:
        p = todo.pop()
        for c in _children(p):
            seen.append(c)
            todo.append(c)
    return seen


class Sampler(threading.Thread):
    """Samples the RSS of the driver, the JVM and the Python workers (descendants of the JVM) every 0.5 s.

    Peaks of single processes are their kernel high-water marks (VmHWM), exact whatever the interval; only the
    workers' sum is sampled. The list of workers is refreshed every 2 s (PySpark reuses its workers): walking the
    JVM's hundred-odd threads at every sample cost the driver some 5% of a core, taken from the engine it measures."""

    INTERVAL_S = 0.5
    REFRESH_S = 2.0

    def __init__(self, jvm_pid: int):
        super().__init__(daemon=True)
        self.jvm_pid = jvm_pid
        self.peak = {"driver_mb": 0.0, "jvm_mb": 0.0, "workers_total_mb": 0.0, "worker_max_mb": 0.0}
        self.worker_hwm: dict[int, float] = {}
        self.stop_event = threading.Event()
        self.lock = threading.Lock()
        self.workers: list[int] = []
        self.refreshed = float("-inf")

    def _workers(self) -> list[int]:
        if time.monotonic() - self.refreshed >= self.REFRESH_S:
            self.workers = _descendants(self.jvm_pid)
            self.refreshed = time.monotonic()
        return self.workers

    def sample(self, refresh: bool = False) -> dict:
        with self.lock:
            if refresh:
                self.refreshed = float("-inf")
            driver, jvm = _status(os.getpid()), _status(self.jvm_pid)
            now = {"driver_mb": _kb(driver.get("VmRSS")), "jvm_mb": _kb(jvm.get("VmRSS"))}
            self.peak["driver_mb"] = max(self.peak["driver_mb"], _kb(driver.get("VmHWM")))
            self.peak["jvm_mb"] = max(self.peak["jvm_mb"], _kb(jvm.get("VmHWM")))
            total = 0.0
            for pid in self._workers():
                st = _status(pid)
                if not st.get("Name", "").startswith("python"):
                    continue
                rss = _kb(st.get("VmRSS"))
                total += rss
                self.worker_hwm[pid] = max(self.worker_hwm.get(pid, 0.0), _kb(st.get("VmHWM")))
                self.peak["worker_max_mb"] = max(self.peak["worker_max_mb"], rss)
            now["workers_total_mb"] = total
            self.peak["workers_total_mb"] = max(self.peak["workers_total_mb"], total)
            return now

    def run(self):
        while not self.stop_event.wait(self.INTERVAL_S):
            self.sample()


# -- the two children --------------------------------------------------------------------------------------

def _config(preset: str, overrides: dict):
    from explorer.catalog import preset_config
    return preset_config(preset, **overrides)


def _model_and_options(preset: str, overrides: dict, search: dict):
    from explorer.search import SearchOptions

    return build_model(_config(preset, overrides), symmetry=search["symmetry"]), SearchOptions(
        max_depth=search["max_depth"], workers=search.get("workers", 1))


def child_bfs(preset: str, overrides: dict, search: dict) -> dict:
    from explorer.search import bfs
    from explorer.catalog import select_invariants as select

    started = time.monotonic()
    model, search_options = _model_and_options(preset, overrides, search)
    result = bfs(model, select(), search_options)
    return {"engine": "bfs", "result": result.result, "distinct_states": result.distinct_states,
            "states_generated": result.states_generated, "depth": result.depth, "coverage": result.coverage,
            "search_s": result.elapsed_s, "process_s": round(time.monotonic() - started, 2),
            "cpu_s": round(_cpu_s(os.getpid()), 1),   # with the --bfs-workers processes, joined by now
            "workers": search.get("workers", 1),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
                                 + sum(result.memory.get("worker_peak_rss", [])) / 2**20, 1)}


def child_spark(preset: str, overrides: dict, search: dict, master: str, partitions: int | None) -> dict:
    from explorer.catalog import select_invariants as select
    from spark_explore import SparkOptions, explore_spark, session

    started = time.monotonic()
    model, search_options = _model_and_options(preset, overrides, search)
    options = SparkOptions(master=master, partitions=partitions)
    handle = session.start(options)
    sc = handle.sc
    jvm_pid = sc._gateway.proc.pid
    sampler = Sampler(jvm_pid)
    sampler.start()
    spark_started_s = time.monotonic() - started
    runtime = sc._jvm.java.lang.Runtime.getRuntime()
    levels = []

    def on_level(figures: dict) -> None:
        # A full JVM GC first, so that "heap live" is what the JVM keeps rather than garbage not yet collected
        # (it takes some 0.05 s a level: included in the total wall time, not in the level's seconds).
        sc._jvm.java.lang.System.gc()
        now = sampler.sample()
        cached = sum(i.memSize() + i.diskSize() for i in sc._jsc.sc().getRDDStorageInfo())
        busiest = max(p["seconds"] for p in figures["partitions"])
        levels.append({
            "level": figures["level"], "frontier": figures["frontier"], "distinct": figures["distinct"],
            "seconds": round(figures["seconds"], 3), "busiest_partition_s": round(busiest, 3),
            "overhead_s": round(figures["seconds"] - busiest, 3),
            "driver_rss_mb": round(now["driver_mb"], 1), "jvm_rss_mb": round(now["jvm_mb"], 1),
            "jvm_heap_live_mb": round((runtime.totalMemory() - runtime.freeMemory()) / MB, 1),
            "cached_mb": round(cached / MB, 1), "workers_rss_mb": round(now["workers_total_mb"], 1),
            "worker_peak_rss_mb": round(max(p["worker_peak_rss_mb"] for p in figures["partitions"]), 1),
        })
        print(f"  level {figures['level']:>3}  frontier {figures['frontier']:>9,}  distinct {figures['distinct']:>11,}"
              f"  {figures['seconds']:6.2f}s  driver {now['driver_mb']:6.1f} MB  JVM {now['jvm_mb']:7.1f} MB"
              f"  heap {levels[-1]['jvm_heap_live_mb']:6.1f} MB  cached {cached / MB:6.1f} MB"
              f"  workers {now['workers_total_mb']:7.1f} MB", file=sys.stderr)

    try:
        result = explore_spark(model, select(), search_options, options, sc=sc, on_level=on_level)
        sampler.sample(refresh=True)
        workers = [p for p in _descendants(jvm_pid) if _status(p).get("Name", "").startswith("python")]
        cpu = {"driver": round(_cpu_s(os.getpid()), 1), "jvm": round(_cpu_s(jvm_pid), 1),
               "workers": round(sum(_cpu_s(p) for p in workers), 1)}
    finally:
        sampler.stop_event.set()
        handle.stop()
    return {"engine": "spark", "master": master, "partitions": result.spark["partitions"],
            "result": result.result, "distinct_states": result.distinct_states,
            "states_generated": result.states_generated, "depth": result.depth, "coverage": result.coverage,
            "search_s": result.elapsed_s, "spark_start_s": round(spark_started_s, 2),
            "process_s": round(time.monotonic() - started, 2),
            "peak": {k: round(v, 1) for k, v in sampler.peak.items()}, "cpu_s": cpu,
            "worker_hwm_mb": sorted(round(v, 1) for v in sampler.worker_hwm.values()),
            "levels": levels}


def _run_child(args: list[str]) -> dict:
    """Run one engine in its own process; also samples the machine's load average meanwhile (other work on the
    machine slows either engine)."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", *args], stdout=subprocess.PIPE,
                            env=env, text=True)
    loads = []
    while True:
        try:
            stdout, _ = proc.communicate(timeout=5)
            break
        except subprocess.TimeoutExpired:
            loads.append(float(_loadavg().split()[0]))
    if proc.returncode != 0:
        raise SystemExit(f"the {args[0]} run failed (exit code {proc.returncode})")
    out = json.loads(stdout.strip().splitlines()[-1])
    out["wall_s"] = round(time.monotonic() - started, 2)
    out["mean_loadavg_1min"] = round(sum(loads) / len(loads), 2) if loads else None
    return out


def _parse_set(values) -> dict:
    out = {}
    for item in values or ():
        key, _, value = item.partition("=")
        out[key] = value.lower() == "true" if value.lower() in ("true", "false") else int(value)
    return out


def _loadavg() -> str:
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("preset", nargs="?", default="medium")
    parser.add_argument("--set", action="append", metavar="PARAM=N", help="override a model parameter")
    parser.add_argument("--max-depth", type=int, default=None, help="stop both searches at this BFS depth")
    parser.add_argument("--symmetry", action="store_true", help="both engines with dir symmetry reduction")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--spark-partitions", type=int, default=None)
    parser.add_argument("--skip-bfs", action="store_true", help="run only the Spark engine")
    parser.add_argument("--bfs-first", action="store_true", help="run the local BFS before the Spark engine")
    parser.add_argument("--bfs-workers", type=int, default=1, metavar="N",
                        help="worker processes of the local BFS (default 1; the CLI's default is every core)")
    parser.add_argument("--json", metavar="PATH", help="also write every figure as JSON")
    parser.add_argument("--child", choices=("bfs", "spark"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    overrides = _parse_set(args.set)
    search = {"max_depth": args.max_depth, "symmetry": args.symmetry, "workers": args.bfs_workers}

    if args.child == "bfs":
        print(json.dumps(child_bfs(args.preset, overrides, search)))
        return
    if args.child == "spark":
        print(json.dumps(child_spark(args.preset, overrides, search, args.master, args.spark_partitions)))
        return

    common = [args.preset] + [f"--set={s}" for s in (args.set or ())]
    if args.max_depth is not None:
        common += ["--max-depth", str(args.max_depth)]
    if args.symmetry:
        common.append("--symmetry")
    bfs_args = ["--bfs-workers", str(args.bfs_workers)]
    load_before = _loadavg()
    print(f"Spark engine ({args.master}) on preset {args.preset} {overrides or ''}: levels as they finish",
          file=sys.stderr)
    spark_args = common + ["--master", args.master]
    if args.spark_partitions:
        spark_args += ["--spark-partitions", str(args.spark_partitions)]
    bfs = _run_child(["bfs", *common, *bfs_args]) if args.bfs_first and not args.skip_bfs else None
    spark = _run_child(["spark", *spark_args])
    if bfs is None and not args.skip_bfs:
        bfs = _run_child(["bfs", *common, *bfs_args])
    load_after = _loadavg()

    machine = {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
               "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1024 ** 3, 1),
               "loadavg_before": load_before, "loadavg_after": load_after}
    try:
        import pyspark
        machine["pyspark"] = pyspark.__version__
        machine["java"] = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    except Exception:  # noqa: BLE001
        pass

    levels = spark["levels"]
    quiet_levels = [lv for lv in levels[1:] if lv["busiest_partition_s"] < 0.05]   # no work: the fixed cost
    summary = {
        "machine": machine, "preset": args.preset, "overrides": overrides, "spark": spark, "bfs": bfs,
        "per_level_overhead_s": {
            "mean": round(sum(lv["overhead_s"] for lv in levels) / len(levels), 3),
            "median": sorted(lv["overhead_s"] for lv in levels)[len(levels) // 2],
            "fixed_cost_of_a_near_empty_level": round(sum(lv["seconds"] for lv in quiet_levels) / len(quiet_levels), 3)
            if quiet_levels else None,
        },
    }
    if bfs is not None:
        same = {k: spark[k] == bfs[k] for k in ("result", "distinct_states", "states_generated", "depth", "coverage")}
        summary["identical_counts"] = all(same.values())
        summary["spark_over_bfs_wall"] = round(spark["wall_s"] / bfs["wall_s"], 2)

    print(f"\nMachine: {machine['platform']}, {machine['cpus']} CPUs, {machine['memory_gb']} GB, Python "
          f"{machine['python']}, pyspark {machine.get('pyspark')}, {machine.get('java')}; load average "
          f"{load_before} before, {load_after} after")
    print(f"Model: preset {args.preset} {overrides or ''}; symmetry {'on' if args.symmetry else 'off'}"
          f"{'' if args.max_depth is None else f'; --max-depth {args.max_depth}'}")
    rows = [("engine", "result", "distinct", "generated", "depth", "search s", "process s", "CPU s", "CPU us/state",
             "load")]
    for r in filter(None, (bfs, spark)):
        label = f"bfs x{r['workers']}" if r["engine"] == "bfs" else f"spark {r['master']} x{r['partitions']}"
        cpu = r["cpu_s"] if r["engine"] == "bfs" else sum(r["cpu_s"].values())
        rows.append((label, r["result"], f"{r['distinct_states']:,}", f"{r['states_generated']:,}", str(r["depth"]),
                     f"{r['search_s']:.1f}", f"{r['wall_s']:.1f}", f"{cpu:.0f}",
                     f"{cpu * 1e6 / max(r['distinct_states'], 1):.0f}", str(r["mean_loadavg_1min"])))
        r["cpu_us_per_state"] = round(cpu * 1e6 / max(r["distinct_states"], 1), 1)
    for row in rows:
        print("{:<20} {:<8} {:>12} {:>12} {:>6} {:>9} {:>10} {:>7} {:>12} {:>6}".format(*row))
    c = spark["cpu_s"]
    print(f"Spark CPU seconds: Python workers {c['workers']}, JVM {c['jvm']}, driver {c['driver']}. "
          f"(load: the machine's mean 1-minute load average during the run; 2 means both cores were busy)")
    if bfs is not None:
        summary["spark_over_bfs_cpu"] = round(spark["cpu_us_per_state"] / bfs["cpu_us_per_state"], 2)
        print(f"Identical counts (distinct, generated, depth, coverage): {summary['identical_counts']}; "
              f"Spark wall time / BFS wall time: {summary['spark_over_bfs_wall']}; Spark CPU per state / BFS CPU "
              f"per state: {summary['spark_over_bfs_cpu']}")
    o = summary["per_level_overhead_s"]
    quiet = "n/a (every level had work)" if o["fixed_cost_of_a_near_empty_level"] is None \
        else f"{o['fixed_cost_of_a_near_empty_level']}s"
    print(f"Spark: start {spark['spark_start_s']:.1f}s; {len(levels)} levels; per-level overhead (level time minus "
          f"its busiest partition's pass): mean {o['mean']:.3f}s, median {o['median']:.3f}s; a near-empty level "
          f"takes {quiet}")
    peak = spark["peak"]
    print(f"Peak memory (RSS): BFS process {bfs['peak_rss_mb'] if bfs else '-'} MB; Spark driver (Python) "
          f"{peak['driver_mb']} MB, JVM {peak['jvm_mb']} MB, Python workers together {peak['workers_total_mb']} MB "
          f"(largest one {max(spark['worker_hwm_mb'] or [0])} MB)")
    first, mid, last = levels[min(5, len(levels) - 1)], levels[len(levels) // 2], levels[-1]
    print("Driver memory as the visited set grows (level: distinct, driver RSS, JVM heap live after a full GC, "
          "cached RDD data, which local mode keeps in the same JVM):")
    for lv in (first, mid, last):
        print(f"  level {lv['level']:>3}: {lv['distinct']:>11,} states, driver {lv['driver_rss_mb']} MB, "
              f"JVM heap {lv['jvm_heap_live_mb']} MB, cached {lv['cached_mb']} MB")
    growth = last["driver_rss_mb"] - first["driver_rss_mb"]
    print(f"Driver (Python) RSS grew {growth:+.1f} MB from level {first['level']} to the end while the visited set "
          f"grew from {first['distinct']:,} to {last['distinct']:,} states.")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
