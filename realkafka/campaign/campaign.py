"""A conformance campaign's loop (model -> real): for each trace, a random walk of the model (generate.py), planned
(plan.py) and driven on a fresh cluster (run.py's Driver, judged by trace validation), its outcome classified and
every rule's share counted. The caller gives the clusters (``start_cluster(model, plan)``: a context manager, the
harness's Cluster or a scripted one) and owns their processes through it.

Outcomes of a trace: ``matched`` (the planned interleaving at every step), ``conforms`` (a behaviour of the model on
another interleaving), ``disagrees`` (the run left the model: its scenario is written for `jbodcheck reproduce`),
``refused`` (the plan cannot be run: a timing the holds cannot force, a property no check judges; not counted as
agreement or disagreement), ``harness`` (the harness failed: a node died unasked, a start that failed).
Per rule and release: ``driven`` (a driven step of it ran), ``observed`` (the planned run took it among the
cluster's own steps before a view the real cluster showed), and how many of those the real cluster agreed with
(the step's view was a behaviour of the model)."""
from __future__ import annotations

import json
import random
import shutil
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from realkafka.driver.mapping import DRIVEN, ORDERED
from realkafka.driver.plan import Plan, PlanError, plan, unjudged, why_unforced
from realkafka.driver.run import Driver, NodeDied
from realkafka.driver.session import Session

from .chaos import ChaosRun
from .generate import Behaviour, drivable, labels, walk
from .neighbours import Neighbourhood, around_jobs
from .resume import unfinished
from .shrink import shrink

OUTCOMES = ("matched", "conforms", "disagrees", "refused", "harness")


@dataclass
class TraceResult:
    number: int
    release: str
    steps: list                  # the scenario's step labels (a real -> model run: the actions it took)
    outcome: str
    says: str = ""               # the verdict or the reason, in a line
    scenario: str | None = None  # where the trace was written (every disagreement's)
    elapsed_s: float = 0.0
    violations: list = field(default_factory=list)   # the checks the real cluster showed
    kind: str = "model"          # "model": generated from the model; "real": random faults at real timing
    shrunk: list | None = None   # a disagreement's smallest trace that still disagrees (step labels), if shrunk
    shrink_runs: int = 0
    slow: list = field(default_factory=list)        # the steps that waited 10 s or more: [step, text, s, matched]
    logs: str | None = None      # where a disagreeing trace's server logs were kept
    around: str | None = None    # a mutation of a finding's trace (--around): which scenario, which mutation


@dataclass
class Campaign:
    traces: list = field(default_factory=list)
    rules: dict = field(default_factory=dict)   # rule -> release -> Counter(driven, observed, agreed)

    def count(self, rule: str, release: str, what: str) -> None:
        self.rules.setdefault(rule, {}).setdefault(release, Counter())[what] += 1

    def outcomes(self) -> Counter:
        return Counter(t.outcome for t in self.traces)


def _rule_of(label: str) -> str:
    return label.split("(", 1)[0]


def _tally(release: str, run) -> list:
    """(rule, release, what) per count a generated trace's run adds (Campaign.count)."""
    out = []
    for step in run.steps:
        judged = step.observed is not None and step.unobserved is None
        if step.how in (DRIVEN, ORDERED) and step.taken and step.text:
            out.append((_rule_of(step.text), release, "driven"))
            if judged and step.conforms:
                out.append((_rule_of(step.text), release, "driven_agreed"))
        for label in step.own:
            out.append((_rule_of(label), release, "observed"))
            if judged and step.conforms:
                out.append((_rule_of(label), release, "observed_agreed"))
    return out


@dataclass
class _Job:
    number: int
    release: str
    kind: str
    steps: list | None = None      # a generated trace's (rule name, args)
    seed: float = 0.0              # a real -> model run's
    around: str | None = None      # a mutation's scenario and mutation (neighbours.py), None for a walk


HARNESS_ERRORS = ("HarnessError", "ProbeError", "FakeHarnessError", "TooManyCandidates")


def run_campaign(*, releases, model_of, start_cluster, traces: int, seed: int, length: int, out: Path,
                 cluster_has=lambda m: True, step_timeout: float = 180.0, echo=lambda line: None,
                 model_params=lambda release: {}, holder: dict | None = None, mode: str = "model",
                 faults: int = 5, shrink_budget: int = 0, parallel: int = 1,
                 resumed: Campaign | None = None, runner=None, engine=None, around=None) -> Campaign:
    """``traces`` traces in all, dealt round-robin over ``releases`` (with "both", a pair of one of each kind at a
    time); ``model_of(release)`` is the model the
    cluster of that release is judged by. ``mode``: "model" (traces generated from the model), "real" (random
    faults at real timing, chaos.py), "both" (alternating, the model's first). Every trace is chosen first (the
    seed fixes them all), then run, ``parallel`` at once, each on its own cluster. ``resumed``: an interrupted
    campaign of the same parameters (resume.py): its traces are kept, the others run; ResumeMismatch when a trace
    it ran is not the one the seed chooses now. ``runner(job)``: runs one trace elsewhere (a Spark task, whose
    executor calls run_job with a cluster of its own) and returns what run_job returns. ``engine``: the controller
    mode's walk, driver and random-fault run (KRAFT, below; the ZooKeeper mode's: realkafka/campaign/zk.py):
    everything else, the choice of traces, the loop, the counts and the report, is one for both. ``around``:
    release -> [(scenario name, its made steps)]: the model traces are mutations of these (neighbours.py) while
    any is left, walks after."""
    engine = engine or KRAFT
    campaign = resumed if resumed is not None else Campaign()
    if holder is not None:
        holder["campaign"] = campaign       # what an interrupted campaign did, for its report
    models = {r: model_of(r) for r in releases}
    actions = {r: engine.drivable(models[r], cluster_has) for r in releases}
    out.mkdir(parents=True, exist_ok=True)
    jobs = chosen(releases, models, actions, traces=traces, seed=seed, length=length, mode=mode,
                  engine=engine, around=around)
    if resumed is not None:
        jobs = unfinished(jobs, resumed, lambda job: labels(models[job.release], job.steps))

    def one(job: _Job):
        result, tally = runner(job) if runner is not None else _run_here(job)
        result.around = job.around
        return result, tally

    def _run_here(job: _Job):
        return run_job(job, model=models[job.release], start_cluster=start_cluster, step_timeout=step_timeout,
                       shrink_budget=shrink_budget, faults=faults, cluster_has=cluster_has, out=out, seed=seed,
                       model_params=model_params, actions=actions[job.release], engine=engine)

    def finish(result: TraceResult, tally: list) -> None:
        for rule, release, what in tally:
            campaign.count(rule, release, what)
        campaign.traces.append(result)
        campaign.traces.sort(key=lambda t: t.number)
        echo(_progress(result, traces))

    if parallel <= 1 and runner is None:
        for job in jobs:
            finish(*one(job))
        return campaign
    # (a runner's traces run in threads even one at a time: an interrupt reaches the main thread here, waiting,
    # never inside a call of the runner's, e.g. to Spark's JVM)
    with ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="conform") as pool:
        try:
            for done in as_completed([pool.submit(one, job) for job in jobs]):
                finish(*done.result())
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            if hasattr(runner, "cancel"):
                runner.cancel()         # the traces in flight elsewhere end now, not when they are done
            raise
    return campaign


def run_job(job: _Job, *, model, start_cluster, step_timeout: float, shrink_budget: int, faults: int, cluster_has,
            out: Path, seed: int, model_params, actions=None, engine=None) -> tuple:
    """Run one chosen trace on a cluster of ``start_cluster``: (its TraceResult, its rule counts)."""
    engine = engine or KRAFT
    if job.kind == "real":
        return engine.real_run(job, model, start_cluster, faults, cluster_has, step_timeout, out)
    if actions is None:
        actions = engine.drivable(model, cluster_has)
    return engine.model_trace(job, model, start_cluster, step_timeout, shrink_budget, actions, out, seed,
                              model_params)


def chosen(releases, models: dict, actions: dict, *, traces: int, seed: int, length: int, mode: str,
           engine=None, around=None) -> list:
    """Every trace of the campaign, in order, as the seed chooses it (before any runs: whatever runs first or
    fails, and however many at once, the same traces). ``around``: as run_campaign's."""
    rng = random.Random(seed)
    counts: dict = {r: Counter() for r in releases}
    behaviour = (engine or KRAFT).behaviour
    mutated = {r: around_jobs([Neighbourhood(models[r], name, made, actions[r], behaviour)
                               for name, made in around[r]]) for r in releases} if around else {}
    jobs = []
    for n in range(1, traces + 1):
        # "both" deals a pair (a model trace, a real run) to each release in turn, so every release gets both kinds
        release = releases[((n - 1) // 2 if mode == "both" else n - 1) % len(releases)]
        if mode == "real" or (mode == "both" and n % 2 == 0):
            jobs.append(_Job(n, release, "real", seed=rng.random()))
        elif (found := mutated[release](rng) if mutated else None) is not None:
            jobs.append(_Job(n, release, "model", found[1], around=found[0]))
        else:
            jobs.append(_Job(n, release, "model", walk(models[release], rng, length, counts[release],
                                                       actions[release], behaviour)))
    return jobs


def check_resumable(resumed: Campaign, *, releases, model_of, cluster_has=lambda m: True, traces: int, seed: int,
                    length: int, mode: str, engine=None, around=None) -> None:
    """ResumeMismatch when a trace ``resumed`` ran is not the one the seed chooses now (before any cluster)."""
    engine = engine or KRAFT
    models = {r: model_of(r) for r in releases}
    actions = {r: engine.drivable(models[r], cluster_has) for r in releases}
    unfinished(chosen(releases, models, actions, traces=traces, seed=seed, length=length, mode=mode,
                      engine=engine, around=around), resumed,
               lambda job: labels(models[job.release], job.steps))


def _progress(t: TraceResult, traces: int) -> str:
    if t.kind == "real":
        return (f"trace {t.number}/{traces} at {t.release} (random faults): {t.outcome} ({len(t.steps)} actions, "
                f"{t.elapsed_s:.0f} s){': ' + t.says if t.outcome not in ('matched', 'conforms') else ''}"
                + (f"; the real cluster showed {', '.join(t.violations)}" if t.violations else ""))
    return (f"trace {t.number}/{traces} at {t.release}: {t.outcome} ({len(t.steps)} steps, {t.elapsed_s:.0f} s)"
            + (f" [around {t.around}]" if t.around else "")
            + (f": {t.says}" if t.outcome not in ("matched", "conforms") else "")
            + (f"; the real cluster showed {', '.join(t.violations)}" if t.violations else ""))


def _harness_failed(result: TraceResult, e: Exception) -> None:
    """The trace's outcome when the harness failed on it (a node that died unasked, a cluster that did not start,
    too many candidates); any other exception is a bug of the tool, raised on."""
    if isinstance(e, NodeDied):
        result.outcome, result.says = "harness", f"a node ended unasked: {e}"
    elif type(e).__name__ in HARNESS_ERRORS:
        result.outcome, result.says = "harness", " ".join(str(e).split())[:300]
    else:
        raise e


def _driver(cluster, model, planned, step_timeout) -> Driver:
    return Driver(cluster, model, planned, timeout=step_timeout, still=min(45.0, step_timeout / 4),
                  poll=min(1.0, step_timeout / 20))


def _model_trace(job: _Job, model, start_cluster, step_timeout, shrink_budget, actions, out, seed, model_params):
    steps, release, n = job.steps, job.release, job.number
    result = TraceResult(n, release, labels(model, steps), "refused")
    tally: list = []
    start = time.monotonic()
    try:
        planned = plan(model, steps)
        reason = why_unforced(model, steps, planned)
        blind = unjudged(model, steps, planned.target)
        if blind:
            reason = ("its trace violates " + ", ".join(sorted(blind))
                      + ", which no real-cluster check shows on its trace")
    except PlanError as e:
        planned, reason = None, str(e)
    if reason is not None:
        result.says = reason
    else:
        try:
            run = Session(start_cluster(model, planned), lambda cluster: _driver(cluster, model, planned, step_timeout)) \
                .run(after=_logs_kept(result, out, f"trace-{n:04d}-{release}-logs"))
            tally = _tally(release, run)
            result.slow = [[s.number, s.text, round(s.waited_s, 1), s.matched] for s in run.steps
                           if s.waited_s >= 10]
            result.violations = sorted(run.real_shown())
            if run.disagreement is not None:
                d = run.disagreement
                result.outcome = "disagrees"
                result.says = f"step {d.step}: {d.says}; closest: {'; '.join(d.closest[:3])}"
                if shrink_budget:
                    def disagrees(trace):
                        try:
                            tried = plan(model, trace)
                        except PlanError:
                            return False
                        session = Session(start_cluster(model, tried), lambda c: _driver(c, model, tried, step_timeout))
                        return session.run().disagreement is not None
                    small, result.shrink_runs = shrink(model, steps, actions, disagrees, shrink_budget)
                    result.shrunk = labels(model, small)
            else:
                result.outcome = "matched" if run.matched else "conforms"
                result.says = "every observation a behaviour of the model"
        except Exception as e:  # noqa: BLE001 - the harness failing is an outcome of the trace, not the end
            _harness_failed(result, e)
    result.elapsed_s = time.monotonic() - start
    write_trace(result, model, out, seed, model_params)
    return result, tally


def write_trace(result: TraceResult, model, out: Path, seed, model_params) -> None:
    """A disagreeing, refused or harness-failed trace's scenario file (and its shrunk one), named in ``result``."""
    n, release = result.number, result.release
    if result.outcome in ("disagrees", "refused", "harness"):
        path = out / f"trace-{n:04d}-{release}-{result.outcome}.json"
        path.write_text(json.dumps({"description": f"conform trace {n} (seed {seed}) at Kafka {release}: "
                                                   f"{result.outcome}: {result.says}",
                                    "model": model_params(release), "steps": result.steps}, indent=2) + "\n")
        result.scenario = str(path)
        if result.shrunk is not None:
            small = path.with_name(path.stem + "-shrunk.json")
            small.write_text(json.dumps({"description": f"conform trace {n} (seed {seed}) at Kafka {release}, "
                                                        f"shrunk in {result.shrink_runs} run(s): still disagrees",
                                         "model": model_params(release), "steps": result.shrunk}, indent=2) + "\n")


def keep_logs(cluster, dest: Path) -> str | None:
    """Copy the cluster's server logs (``Cluster.logs``) into ``dest`` before the cluster's directory goes; its
    path, or None for a cluster without logs."""
    logs = getattr(cluster, "logs", lambda: {})()
    if not logs:
        return None
    dest.mkdir(parents=True, exist_ok=True)
    for name, path in logs.items():
        shutil.copyfile(path, dest / f"{name}-server.log")
    return str(dest)


def _logs_kept(result: TraceResult, out: Path | None, name: str):
    """What a session does before its cluster stops: a disagreeing run's server logs kept under ``out/name``."""
    def after(cluster, run) -> None:
        if run.disagreement is not None and out is not None:
            result.logs = keep_logs(cluster, out / name)
    return after


def _real_run(job: _Job, model, start_cluster, faults, cluster_has, step_timeout, out: Path | None = None):
    result = TraceResult(job.number, job.release, [], "conforms", kind="real")
    tally: list = []
    start = time.monotonic()
    try:
        # the waits scale with the step timeout as the driver's do (a quarter, at most 10 s still; 20 s quiet)
        session = Session(start_cluster(model, Plan([], {}, {}, (), dir_failure_timeout=False)), lambda cluster: ChaosRun(
            model, cluster, random.Random(job.seed), cluster_has=cluster_has, still=min(10.0, step_timeout / 4),
            quiet=min(20.0, step_timeout / 2), poll=min(0.5, step_timeout / 20)))
        done = session.run(lambda chaos: chaos.run(faults, gap=(0.0, min(4.0, step_timeout / 8))),
                           after=_logs_kept(result, out, f"trace-{job.number:04d}-{job.release}-logs"))
        result.steps = list(done.actions)
        result.violations = sorted(done.checks)
        for what, counts in (("driven", done.rules), ("observed", done.observed)):
            for rule, times in counts.items():
                tally += [(rule, job.release, what)] * times
                if done.disagreement is None:
                    tally += [(rule, job.release, f"{what}_agreed")] * times
        if done.disagreement is not None:
            d = done.disagreement
            result.outcome = "disagrees"
            result.says = f"after action {d.step}: {d.says}; closest: {'; '.join(d.closest[:3])}"
        else:
            result.says = f"{done.observations} observations, every one a behaviour of the model"
            if done.checks:
                result.says += "; finding candidates: " + "; ".join(f"{c}: {w}" for c, (_, w) in done.checks.items())
    except Exception as e:  # noqa: BLE001 - the harness failing is an outcome of the run, not the end
        _harness_failed(result, e)
    result.elapsed_s = time.monotonic() - start
    return result, tally


KRAFT = SimpleNamespace(drivable=drivable, behaviour=Behaviour, model_trace=_model_trace, real_run=_real_run)


def report_dict(campaign: Campaign, *, releases, seed: int, length: int, preset: str, settings: dict,
                version: str, elapsed_s: float, exit_code: int) -> dict:
    return {
        "schema": 1, "tool": "jbodcheck", "command": "conform", "version": version, "kafka": list(releases),
        "preset": preset, "seed": seed, "length": length, "settings": dict(sorted(settings.items())),
        "outcomes": {o: campaign.outcomes().get(o, 0) for o in OUTCOMES},
        "traces": [{"trace": t.number, "kind": t.kind, "kafka": t.release, "steps": t.steps, "outcome": t.outcome, "says": t.says,
                    "violations": t.violations, "scenario": t.scenario, "elapsed_s": round(t.elapsed_s, 1),
                    "shrunk": t.shrunk, "shrink_runs": t.shrink_runs, "slow": t.slow, "logs": t.logs,
                    "around": t.around}
                   for t in campaign.traces],
        "rules": {rule: {r: dict(c) for r, c in by.items()} for rule, by in sorted(campaign.rules.items())},
        "elapsed_s": round(elapsed_s, 1), "exit_code": exit_code,
    }


def campaign_from_report(data: dict) -> Campaign:
    """The campaign an earlier report (report_dict's) describes: its traces and rule counts, to be resumed."""
    campaign = Campaign()
    for t in data["traces"]:
        campaign.traces.append(TraceResult(
            number=t["trace"], release=t["kafka"], steps=list(t["steps"]), outcome=t["outcome"], says=t["says"],
            scenario=t.get("scenario"), elapsed_s=float(t.get("elapsed_s", 0.0)), violations=list(t["violations"]),
            kind=t.get("kind", "model"), shrunk=t.get("shrunk"), shrink_runs=t.get("shrink_runs", 0),
            slow=list(t.get("slow", [])), around=t.get("around")))
    campaign.traces.sort(key=lambda t: t.number)
    campaign.rules = {rule: {r: Counter(c) for r, c in by.items()} for rule, by in data["rules"].items()}
    return campaign


__all__ = ["Campaign", "TraceResult", "run_campaign", "report_dict", "campaign_from_report", "check_resumable",
           "chosen", "run_job", "write_trace", "KRAFT", "OUTCOMES"]
