"""Run a planned scenario (plan.py) on a real cluster: per step, the holds in force, the driven action, then a wait
that judges each observation by the model (validate.py: is it a behaviour of the model?); at the end every hold is
released, a consumer reads what was acknowledged, and the violation checks (checks.py) are judged on both sides.

The driver owns no process: the caller starts and stops the cluster (``with Cluster(spec) as c``), so every path
out of here (a disagreement, a harness failure, Ctrl-C) leaves the cleanup to that ``with``.

A wait ends
- when the real view is the planned model run's (the planned interleaving);
- when it is another view the model allows (some candidate shows it) and has not changed for ``still`` seconds, or
  for 3 s when no state the model's own steps reach from the candidates showing it looks otherwise (by the model,
  the cluster makes no observable move before the next driven step): the
  cluster took another path of the model, and the run goes on from the states that show it;
- when no candidate shows it and it has not changed for ``quiet`` seconds: the run left the model, a disagreement,
  and the run stops there (no further step can be judged against states that do not exist);
- at ``timeout`` seconds, as one of the last two by whether the last view was a behaviour of the model.
Every observation also asks the harness whether a node died without being ended (``dead()``): a harness failure.
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field, replace

from model.kraft.reassignment import target_of
from realkafka.cluster.roles import has

from .checks import judge
from .compare import CONTROLLER, PARTS, differences
from .mapping import ANSWER, AWAITED, DELAYED, DRIVEN, FETCH, Hold, handler
from .observed import view_of
from .plan import cluster_steps, hold_texts
from .validate import Disagreement, Tracker
from .view import View, foreign_dir, topic_of


@dataclass
class StepResult:
    number: int
    text: str
    how: str                     # the handler's kind, "start" or "end"
    taken: bool
    own: tuple                   # the cluster's own steps the model took after it
    holds: tuple                 # the holds in force after the step (their text)
    expected: View
    observed: View | None = None
    differences: list = field(default_factory=list)
    waited_s: float = 0.0
    model_checks: dict = field(default_factory=dict)
    real_checks: dict = field(default_factory=dict)
    unobserved: str | None = None     # why this view was not observed (the harness's producer waits)
    observed_before: View | None = None   # the last view observed before this step (what "changed" is from)
    records: list = field(default_factory=list)   # the metadata records the controller wrote since the last view
    conforms: bool = True        # the real view is a behaviour of the model (validate.py), planned or not
    candidates: int = 0          # the model states consistent with the run after this step

    @property
    def matched(self) -> bool:
        """The real cluster showed the planned model run's view (the planned interleaving)."""
        return self.unobserved is not None or (self.observed is not None and not self.differences)


@dataclass
class RunResult:
    steps: list                  # StepResult, the start first and the end last
    interrupted: int | None = None   # the signal that stopped the run
    retrying_observed: bool = True   # whether the real side could judge assignments_never_drain
    retry_evidence: dict = field(default_factory=dict)   # broker -> the refusals it logged (the decisive lines)
    disagreement: Disagreement | None = None   # where the real run left the model (the run stopped there)

    @property
    def matched(self) -> bool:
        """Every step showed the planned model run's view."""
        return self.disagreement is None and all(s.matched for s in self.steps)

    @property
    def conforms(self) -> bool:
        """The real run stayed a behaviour of the model at every observation (planned interleaving or not)."""
        return self.disagreement is None and all(s.conforms for s in self.steps)

    def real_shown(self) -> dict:
        found: dict = {}
        for s in self.steps:
            for cid, why in s.real_checks.items():
                found.setdefault(cid, (s.number, why))
        return found

    def model_shown(self) -> dict:
        found: dict = {}
        for s in self.steps:
            for cid, why in s.model_checks.items():
                found.setdefault(cid, (s.number, why))
        return found


# The metadata records a step's report keeps (the decisive ones: registrations, fencing, partitions, features).
SHOWN_RECORDS = ("RegisterBrokerRecord", "BrokerRegistrationChangeRecord", "FenceBrokerRecord", "UnfenceBrokerRecord",
                 "TopicRecord", "PartitionRecord", "PartitionChangeRecord", "RemoveTopicRecord", "FeatureLevelRecord",
                 "ClearElrRecord")
RETRY_LINE = "for assignment of partition"   # AssignmentsManager: "Controller returned error E for assignment of ..."


def _refusals(cluster, broker: int, lines: dict | None = None) -> int:
    """How many per-partition errors of AssignReplicasToDirs the broker has logged so far (AssignmentsManager logs
    one line per refused entry of each answer, 3.7.0 to 4.x: "Controller returned error {} for assignment of
    partition {} into directory {}"); a refusal it drops is logged otherwise ("Dropping late directory
    assignment")."""
    try:
        text = cluster.server_log(broker).read_text(errors="replace")
    except OSError:
        return 0
    found = [line for line in text.splitlines() if "Controller returned error" in line and RETRY_LINE in line]
    if found and lines is not None:
        lines[broker] = found[-1].strip()
    return len(found)


def retrying_brokers(cluster, brokers: int, interval: float, evidence: dict | None = None) -> frozenset | None:
    """The brokers whose refused AssignReplicasToDirs entries keep coming back over ``interval`` seconds once the
    cluster settled, counted from the brokers' own logs (the ``server_log`` capability); None without it."""
    if not has(cluster, "server_log"):
        return None
    counter = lambda b: _refusals(cluster, b, evidence)  # noqa: E731
    before = [counter(b) for b in range(brokers)]
    time.sleep(interval)
    after = [counter(b) for b in range(brokers)]
    if evidence is not None:
        for b in range(brokers):
            if after[b] > before[b] and b in evidence:
                evidence[b] = f"{after[b] - before[b]} more in {interval:.0f} s, the last: {evidence[b]}"
    return frozenset(b for b in range(brokers) if after[b] > before[b])


def _plain(named):
    """A DirNames answer for a report: (broker, dir) as "dir D of broker B", else as it is."""
    return foreign_dir(*named) if isinstance(named, tuple) else named


def _read_count(result) -> int:
    records = getattr(result, "records", result)
    return len(records)


class HarnessCannot(Exception):
    """The harness lacks what a step needs (a capability its cluster kind does not declare, realkafka/cluster/roles.py):
    the scenario cannot run with it."""


class Refused(Exception):
    """Kafka refused a driven request outright, with nothing done (a produce answered NOT_ENOUGH_REPLICAS before
    any append): the model's states where the rule is disabled are the ones consistent with it."""


class Unknown(Exception):
    """A driven request whose outcome the client cannot tell (a produce that timed out: the producer retries a
    NOT_ENOUGH_REPLICAS refusal until its delivery timeout, so the leader may have appended the record or not):
    the model's states with and without the step are consistent with it."""


# The producer's errors that mean the leader appended nothing (Partition.appendRecordsToLeader checks the ISR
# against min.insync.replicas before it appends; a broker that does not lead, or whose log is offline, appends
# nothing either). A timeout or NotEnoughReplicasAfterAppendException may follow an append: not a refusal.
REFUSED_PRODUCE = ("NotEnoughReplicasException", "NotLeaderOrFollowerException", "UnknownTopicOrPartitionException",
                   "KafkaStorageException")


def do_act(act, ctx, *args) -> tuple[str | None, bool]:
    """Do a driven step's act; (Kafka's refusal in a line, or None; whether its outcome is unknown). A refusal is
    the probe's error or ``Refused``; anything else raised is the harness's, raised on."""
    try:
        act(ctx, *args)
    except Unknown:
        return None, True
    except Exception as e:  # noqa: BLE001 - Kafka refused the call: judged by the model, not a failure
        if type(e).__name__ != "ProbeError" and not isinstance(e, Refused):
            raise
        return " ".join(str(e).split()), False
    return None, False


class NodeDied(Exception):
    """A node of the cluster ended without the harness ending it (killed by a signal: the OOM killer, a stray
    kill; or the controller gone): the harness failed, the run says nothing about Kafka (exit 3)."""


def _gate(cluster, hold: Hold, on: bool, delay: bool = False) -> None:
    """Hold (refused, or with ``delay`` delayed) or release one request at the harness's gate. A follower's Fetch
    is held for all its partitions (the gate knows the requesting broker, not the partition): the scenarios hold
    one partition's."""
    if hold.api == ANSWER:
        (cluster.hold_answers if on else cluster.release_answers)(hold.broker)
    elif on and delay:
        cluster.hold(hold.api, broker=hold.broker, delay=True)
    else:
        (cluster.hold if on else cluster.release)(hold.api, broker=hold.broker)


def _topic_id_of(partition_dir) -> str | None:
    """The topic id a partition directory's ``partition.metadata`` names (Kafka writes "topic_id: ID"), or None."""
    try:
        text = (partition_dir / "partition.metadata").read_text(errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "topic_id":
            return value.strip()
    return None


def failed_copies(cluster, faulted, topic_ids=None) -> dict:
    """broker -> dir -> the driver's topics whose directory the moved-aside contents of a dir the harness failed
    still hold (the harness moves a failed dir to ``<dir>.failed``). ``topic_ids`` (topic -> the id it has now):
    a directory of an earlier topic of the same name (deleted, then created again) is no copy of today's: Kafka
    names partition directories by topic name and keeps the topic id in ``partition.metadata``."""
    out: dict = {}
    for b, d in faulted:
        aside = cluster.dir_path(b, d).with_name(cluster.dir_path(b, d).name + ".failed")
        if not aside.is_dir():
            continue
        topics = set()
        for entry in os.listdir(aside):
            topic, _, partition = entry.rpartition("-")
            if partition != "0" or not (aside / entry).is_dir():
                continue
            now, then = (topic_ids or {}).get(topic), _topic_id_of(aside / entry)
            if now is not None and then is not None and now != then:
                continue
            topics.add(topic)
        out.setdefault(b, {})[d] = frozenset(topics)
    return out


def _settle_slot(slot: list, result) -> str | None:
    """A produced record's slot once its send ended (``result``: the harness's ProduceResult); its error, or None."""
    got = getattr(result, "offset", result)
    error = getattr(result, "error", None)
    ok = error is None and isinstance(got, int)
    slot[0], slot[1], slot[2] = (got if ok else None), True, ok
    slot[3] = error is not None and error.split(":", 1)[0] not in REFUSED_PRODUCE
    return error


class Driver:
    """The context the mapping's acts run in (mapping.py ``act(ctx, *args)``), and the run loop."""

    def __init__(self, cluster, model, plan, *, timeout: float = 300.0, still: float = 45.0, poll: float = 1.0,
                 quiet: float | None = None, echo=lambda step, previous: None):
        self.cluster, self.model, self.plan = cluster, model, plan
        self.timeout, self.still, self.poll = timeout, still, poll
        self.quiet = min(still, 20.0) if quiet is None else quiet
        # another path of the model whose every candidate has no step left is accepted once this still
        self.settled_after = min(still, 3.0)
        self.tracker = None if model is None or plan is None else Tracker(
            model, cluster_steps(model, [(s.rule, s.args) for s in plan.steps if s.rule is not None]),
            model.init_states())
        self.echo = echo
        self.holds: frozenset = frozenset()
        self.produced: dict = {}      # topic -> [[offset or None, done, ok], ...] in produce order
        self.read: dict = {}          # topic -> records read at the current step
        self.retrying: frozenset = frozenset()   # measured at the end only (retrying_brokers)
        self.retrying_observed = True
        self.result = RunResult([])   # filled step by step: an interrupted run keeps what it did
        self.current = 0              # the planned step being run
        self.deferred: dict = {}      # step number -> [(topic, offset, Produce's args)] to produce at it (see produce)
        self.deferring = False        # the current step's produce was deferred: the tracker takes it when sent
        self.produce_timeout = max(30.0, min(timeout, 120.0))
        self.unobserved: str | None = None   # why the current step's view is not observed
        self.last_records: tuple = ()        # the metadata log as last observed
        self.seen_offset = -1                # the last record offset already given to a step
        self._lock = threading.Lock()

    # ---- what the acts use ------------------------------------------------------------------------------------
    def topic(self, partition: int) -> str:
        return topic_of(partition)

    def create_topic(self, partition: int) -> None:
        self.cluster.create_topic(topic_of(partition), {0: list(self.model.original[partition])},
                                  configs={"min.insync.replicas": str(self.model.cfg.min_isr_of(partition))})

    def reassign(self, partition: int) -> None:
        self.cluster.reassign(topic_of(partition), 0, list(target_of(self.model, partition)))

    def produce(self, partition: int) -> None:
        """One record, acks=all. The harness's producer returns once the record is acknowledged (or refused), so a
        record the model acknowledges only at a later step (after a LeaderShrinkIsr) is sent at that step, before
        its wait (``deferred``): the cluster does the same things in the same order, only the view between the two
        is not observed. The tracker takes the Produce when the record is sent, not at this step: the real cluster
        may be on another path of the model meanwhile, where the record, were it sent, would show."""
        topic = topic_of(partition)
        with self._lock:
            records = self.produced.setdefault(topic, [])
            offset = len(records)
            records.append([None, False, False, False])   # offset, sent, acknowledged, outcome unknown
        later = self._ack_step(topic, offset)
        if later is not None and later > self.current:
            self.deferred.setdefault(later, []).append((topic, offset, self.plan.steps[self.current].args))
            self.deferring = True
            self.unobserved = f"not observed: its record is sent with step {later}, whose acknowledgement it awaits"
            return
        error = self._send(topic, offset)
        if error is not None and error.split(":", 1)[0] in REFUSED_PRODUCE:
            raise Refused(f"the producer was refused: {error}")
        if error is not None:
            raise Unknown(f"the producer's outcome is unknown: {error}")

    def _ack_step(self, topic: str, offset: int) -> int | None:
        """The first planned step (from the current one) whose view has the record at ``offset`` acknowledged."""
        for step in self.plan.steps[self.current:]:
            data = step.view.data.get(topic)
            if data is not None and offset in data.acked:
                return step.number
        return None

    def _send(self, topic: str, offset: int) -> str | None:
        slot = self.produced[topic][offset]
        result = self.cluster.produce(topic, 0, f"{topic}-r{offset}".encode(), timeout=self.produce_timeout)
        return _settle_slot(slot, result)

    def _send_aside(self, topic: str, offset: int):
        """Send a deferred record without waiting for its acknowledgement, which awaits steps the cluster takes after
        the step's action (the harness's ``send``); the returned call waits for the outcome and gives its error."""
        slot = self.produced[topic][offset]
        sending = self.cluster.send(topic, 0, f"{topic}-r{offset}".encode(), timeout=self.produce_timeout)

        def sent() -> str | None:
            return _settle_slot(slot, sending())
        return sent

    def restart(self, broker: int) -> None:
        """The broker's JVM started again; the driver awaits the model's view (registration, unfencing) itself."""
        self.cluster.restart(broker, wait=None)

    def consume(self, partition: int) -> None:
        self.read_topic(topic_of(partition))

    def read_topic(self, topic: str) -> None:
        """A consumer's read of ``topic`` from offset 0. One that cannot reach a leader (the probe's consumer times
        out finding the offsets: no broker serves the partition) reads nothing observable: the model's read is then
        none too (no serving leader), and the views do not compare it."""
        try:
            self.read[topic] = _read_count(self.cluster.consume(topic, 0))
        except Exception as e:  # noqa: BLE001 - only the probe's refusal is an observation
            if type(e).__name__ != "ProbeError":
                raise
            self.read.pop(topic, None)

    def acked(self) -> dict:
        out = {}
        with self._lock:
            for topic, records in self.produced.items():
                out[topic] = frozenset((slot[0] if slot[0] is not None else i) for i, slot in enumerate(records)
                                       if slot[1] and slot[2])
        return out

    def unsure(self) -> dict:
        """topic -> the offsets whose producer gave up without knowing the outcome (a timeout, not a refusal): the
        record may have been appended and committed, which the model counts as acknowledged."""
        with self._lock:
            return {topic: frozenset(i for i, slot in enumerate(records) if slot[1] and slot[3])
                    for topic, records in self.produced.items()}

    def _named(self, data: dict) -> dict:
        """A record's dir ids named as the views name them (a dir index, a reserved name), by the harness's
        DirNames where it has them."""
        names = getattr(self.cluster, "names", None)
        if names is None:
            return data
        out = dict(data)
        broker = data.get("brokerId")
        if data.get("logDirs") is not None:
            out["logDirs"] = [_plain(names.index(u, broker)) for u in data["logDirs"]]
        if data.get("directories") is not None and data.get("replicas") is not None:
            out["directories"] = [_plain(names.index(u, b)) for u, b in zip(data["directories"], data["replicas"])]
        elif data.get("directories") is not None:
            out["directories"] = [_plain(names.of(u)) for u in data["directories"]]
        return out

    # ---- the loop -----------------------------------------------------------------------------------------------
    def set_holds(self, target: frozenset) -> None:
        """The gate's rules for ``target``: a hold whose delay mark (Hold(DELAYED, b)) came or went is held again in
        its new mode (the gate replaces the rule)."""
        def delayed(holds, hold):
            return Hold(DELAYED, hold.broker) in holds
        for hold in sorted(self.holds - target):
            if hold.api != DELAYED:
                _gate(self.cluster, hold, False)
        for hold in sorted(target):
            if hold.api != DELAYED and (hold not in self.holds or delayed(target, hold) != delayed(self.holds, hold)):
                _gate(self.cluster, hold, True, delayed(target, hold))
        self.holds = frozenset(target)

    def observe(self, expected: View) -> View:
        self.check_nodes()
        obs = self.cluster.observe()
        self.last_records = tuple(getattr(obs, "records", ()) or ())
        ids = {key[0]: getattr(part, "topic_id", None)
               for key, part in (getattr(obs.controller, "partitions", None) or {}).items()}
        return view_of(obs, self.model.cfg.brokers, self.acked(), dict(self.read), expected.faulted,
                       expected.quiet, self.retrying, failed_copies(self.cluster, expected.faulted, ids),
                       unsure=self.unsure())

    def check_nodes(self) -> None:
        """A node that ended without the harness ending it: NodeDied (the harness's ``dead()``: lines naming each
        node, how it ended and its last error)."""
        dead = getattr(self.cluster, "dead", None)
        lines = dead() if dead is not None else []
        if lines:
            raise NodeDied("; ".join(lines))

    def await_view(self, expected: View, controller_only: bool = False) -> tuple[View, list, float, bool]:
        """Poll until the real view is the planned one (with ``controller_only``, its registrations and partitions
        only), or another the model allows, or none it allows (see the module's note): (the last real view, its
        differences from the planned one, the seconds waited, whether it is a behaviour of the model)."""
        parts = CONTROLLER if controller_only else tuple(PARTS)
        faulted = expected.faulted
        start = last_change = time.monotonic()
        last, found = None, []
        while True:
            real = self.observe(expected)
            diffs = differences(expected, real, parts)
            now = time.monotonic()
            stable = real == last
            if real != last:
                last, last_change = real, now
            if stable or not diffs:
                # a view seen twice in a row (or the planned one) narrows the candidates
                found = self.tracker.narrow(real, faulted, parts)
            if not diffs:
                return real, [], now - start, bool(found)
            unchanged = now - last_change
            if stable and found and (unchanged >= self.still or (
                    unchanged >= self.settled_after and self.tracker.settled(found, real, faulted))):
                return real, diffs, now - start, True
            if stable and not found and unchanged >= self.quiet:
                return real, diffs, now - start, False
            if now - start >= self.timeout:
                return real, diffs, now - start, bool(found)
            time.sleep(self.poll)

    def _step(self, planned, how: str, history_model: list, history_real: list) -> StepResult:
        result = StepResult(planned.number, planned.text, how, planned.taken, planned.own,
                            tuple(hold_texts(planned.holds_after)), planned.view)
        self.read = {}
        self.unobserved = None
        self.current = planned.number
        self.set_holds(planned.holds_during if planned.rule else planned.holds_after)
        refused = None
        self.deferring = False
        left = None
        sending = [(args, self._send_aside(topic, offset))
                   for topic, offset, args in self.deferred.pop(planned.number, ())]
        if planned.rule is not None and planned.taken:
            h = handler(planned.rule)
            if h.how == DRIVEN:
                if h.needs is not None and not has(self.cluster, h.needs):
                    raise HarnessCannot(f"step {planned.number} {planned.text}: the harness has no {h.needs} "
                                        "capability")
                why, unknown = do_act(h.act, self, *planned.args)
                if why is not None:
                    refused = f"Kafka refused {planned.text}: {why}"
                if not self.deferring:
                    left = self.tracker.drive(planned.rule, planned.args, refused=refused is not None,
                                              maybe=unknown)
        for args, sent in sending:
            # the record went out before the step's action and is acknowledged (if at all) by what follows it:
            # Produce is the leader's append alone, so it commutes with the action in the tracker
            error = sent()
            refused_now = error is not None and error.split(":", 1)[0] in REFUSED_PRODUCE
            left = left or self.tracker.drive("Produce", tuple(args), refused=refused_now,
                                              maybe=error is not None and not refused_now)
        result.model_checks = dict(planned.checks)
        history_model.append(planned.view)
        if left is not None:
            # the driven step is no behaviour of the model from the candidates: the run left it here
            self.set_holds(planned.holds_after)
            result.observed = self.observe(planned.view)
            result.differences, result.conforms = differences(planned.view, result.observed), False
            return self._judged(result, planned, refused, history_real, left)
        self.tracker.open(planned.holds_during & planned.holds_after)
        if planned.holds_during != planned.holds_after:
            # The step's own effect first (a released AssignReplicasToDirs handled), then the holds after it.
            self.await_view(planned.view, controller_only=True)
            self.set_holds(planned.holds_after)
        waited = self._final_reads(planned.view) if planned.number == len(self.plan.steps) - 1 else 0.0
        if self.unobserved is not None:
            result.unobserved = self.unobserved
            result.candidates = len(self.tracker.states)
            return result
        result.observed, result.differences, result.waited_s, result.conforms = self.await_view(planned.view)
        result.waited_s += waited
        return self._judged(result, planned, refused, history_real)

    def _judged(self, result: StepResult, planned, refused, history_real: list, left: str | None = None):
        """The step's records, its refusal, how its real view is read when it is another path of the model, the
        disagreement where the run left the model, and the checks on the real views."""
        result.records = [{"offset": r.offset, "type": r.type, "data": self._named(r.data)} for r in self.last_records
                          if r.offset > self.seen_offset and r.type in SHOWN_RECORDS]
        self.seen_offset = max([self.seen_offset] + [r.offset for r in self.last_records])
        if refused is not None:
            result.differences.insert(0, refused)
        if result.differences and result.conforms:
            # another path the model allows: the real checks read the view as the candidates that show it are
            # (quiet only when every one of them is quiescent)
            quiet = all(self.model.is_quiescent(s) for s in self.tracker.states)
            result.observed = replace(result.observed, quiet=quiet)
        result.candidates = len(self.tracker.states)
        if not result.conforms:
            self.result.disagreement = self.tracker.disagreement(planned.number, result.observed, planned.view.faulted)
            if left is not None:
                self.result.disagreement.says = left
        history_real.append(result.observed)
        result.real_checks = judge(history_real)
        return result

    def _final_reads(self, expected: View) -> float:
        """At the end: once the cluster settled, a consumer reads every topic whose records were acknowledged, and,
        where the scenario is about assignments retried for ever, the retries are counted."""
        _, _, waited, _ = self.await_view(expected)
        for topic, offsets in self.acked().items():
            if offsets and topic in expected.partitions:
                self.read_topic(topic)
        if expected.retrying or "assignments_never_drain" in self.plan.target:
            measured = retrying_brokers(self.cluster, self.model.cfg.brokers, self.still, self.result.retry_evidence)
            self.retrying_observed = measured is not None
            self.retrying = measured or frozenset()
        return waited

    def run(self) -> RunResult:
        out = self.result
        if getattr(self.plan, "answers", ()) and not has(self.cluster, "hold_answers"):
            raise HarnessCannot("the plan holds the controller's answers to AssignReplicasToDirs: the harness has "
                                "no hold_answers capability")
        history_model: list = []
        history_real: list = []
        previous = None
        last_real = None
        for planned in self.plan.steps:
            if planned.rule is None:
                how = "start" if planned.number == 0 else "end"
            else:
                how = handler(planned.rule).how if planned.taken else AWAITED
            step = self._step(planned, how, history_model, history_real)
            step.observed_before = last_real
            last_real = step.observed or last_real
            out.steps.append(step)
            self.echo(step, previous)
            previous = step
            if out.disagreement is not None:
                break      # the run left the model: nothing after this can be judged against it
        out.retrying_observed = self.retrying_observed
        return out
