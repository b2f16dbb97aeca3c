"""Every documented finding is what its command prints (docs/testing.md).

A finding in docs/model.md (section 11; the README too, should it state one) carries a marker, an
HTML comment on one line before its text:

    <!-- finding: jbodcheck explore --preset tiny ... | result violation | invariant ID | steps 6 | names A; B -->

Fields after the command, separated by `|`: `result` (ok, violation, bounded), `invariant` (the violated or
inconclusive property), `steps` (the trace's steps: the shortest, as BFS prints it), `names` (step labels, `;`
between them, that occur in this order in the trace; a label matches a step whose action is that label, with or
without the eagerly applied UpdateMetadata), `loop` (a lasso's loop_start), `states` (distinct states), `depth`,
`thorough` (a run of more than about 30 s: run only with JBODCHECK_PROFILE=thorough, tests/profiles.py). The
command is run (as `python -m explorer`, with `--workers 1` for `explore` when it gives none) with `--json`,
and the report must show each field; the text after the marker (up to the next marker or heading) must state
the same step count ("N steps" or "N-step"); markers on consecutive lines share the text after the last one.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys

import pytest

from helpers import REPO
from profiles import THOROUGH
from explorer.catalog import select_invariants

DOCS = (REPO / "docs" / "model.md", REPO / "README.md")
MARK = re.compile(r"^<!-- finding: (.*?) -->[ \t]*$", re.M)
EXIT = {"ok": 0, "bounded": 0, "violation": 1}


def markers(path) -> list[tuple[str, int, dict, str]]:
    """(file name, line, fields, the text after the marker up to the next marker or heading) per marker."""
    text = path.read_text()
    found = list(MARK.finditer(text))
    out = []
    for k, m in enumerate(found):
        command, *pairs = [part.strip() for part in m.group(1).split(" | ")]
        fields = {"command": command}
        for pair in pairs:
            key, _sep, value = pair.partition(" ")
            fields[key] = value.strip()
        last = k      # markers on consecutive lines share the text after the last of them
        while last + 1 < len(found) and found[last + 1].start() == found[last].end() + 1:
            last += 1
        begin = found[last].end()
        end = found[last + 1].start() if last + 1 < len(found) else len(text)
        heading = re.search(r"^#", text[begin:end], re.M)
        after = text[begin: begin + heading.start() if heading else end]
        out.append((path.name, text[:m.start()].count("\n") + 1, fields, after))
    return out


ALL = [entry for path in DOCS for entry in markers(path)]


def _label(action: str | None) -> str | None:
    return None if action is None else action.split(" + UpdateMetadata at ")[0]


def _in_order(names: list[str], labels: list[str]) -> bool:
    it = iter(labels)
    return all(any(label == name for label in it) for name in names)


def test_the_findings_are_marked():
    counts = {name: sum(1 for entry in ALL if entry[0] == name) for name in ("model.md", "README.md")}
    assert counts["model.md"] >= 12, counts
    for name, line, fields, _after in ALL:
        assert fields["command"].startswith("jbodcheck "), (name, line)
        assert fields.get("result") in EXIT, (name, line, fields)
        assert set(fields) <= {"command", "result", "invariant", "steps", "names", "loop", "states", "depth",
                               "thorough"}, (name, line, fields)


def test_the_marker_parser_reads_fields_and_order():
    assert _in_order(["A", "C"], ["A", "B", "C"]) and not _in_order(["C", "A"], ["A", "B", "C"])
    assert _label("CreateTopic(partition=0) + UpdateMetadata at broker 1") == "CreateTopic(partition=0)"


@pytest.mark.parametrize("name, line, fields, after", ALL, ids=[f"{e[0]}:{e[1]}" for e in ALL])
def test_a_finding_is_what_its_command_prints(name, line, fields, after, tmp_path):
    if "thorough" in fields and not THOROUGH:
        pytest.skip("over about 30 s: JBODCHECK_PROFILE=thorough")
    if "steps" in fields:
        n = fields["steps"]
        assert re.search(rf"\b{n}(\s+|-)step", after), f"{name}:{line}: the text does not say {n} steps"
    args = shlex.split(fields["command"])[1:]
    if args[0] == "explore" and "--workers" not in args:
        args += ["--workers", "1"]
    report = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if k != "JBODCHECK_PLUGINS"}
    quiet = ["-q"] if args[0] == "explore" else []
    p = subprocess.run([sys.executable, "-m", "explorer", *args, *quiet, "--json", str(report)], capture_output=True,
                       text=True, cwd=REPO, env=env, timeout=3600)
    where = f"{name}:{line}: {fields['command']}"
    assert p.returncode == EXIT[fields["result"]], (where, p.returncode, p.stderr[-500:])
    data = json.loads(report.read_text())
    assert data["result"] == fields["result"], where
    if "states" in fields:
        assert data["distinct_states"] == int(fields["states"].replace(",", "")), where
    if "depth" in fields:
        assert data["depth"] == int(fields["depth"]), where
    if "invariant" not in fields:
        assert data["violations"] == [], where
        return
    lassos = data["violations"] + data.get("inconclusive", [])
    chosen = [v for v in lassos if v["invariant"] == fields["invariant"]]
    assert chosen, (where, [v["invariant"] for v in lassos])
    v = chosen[0]
    if fields["result"] == "bounded":
        assert v in data["inconclusive"], where
    labels = [_label(step["action"]) for step in v["trace"][1:]]
    if "steps" in fields:
        assert len(labels) == int(fields["steps"]), (where, len(labels), labels)
    if "names" in fields:
        names = [n.strip() for n in fields["names"].split(";")]
        assert _in_order(names, labels), (where, names, labels)
    if "loop" in fields:
        assert v["loop_start"] == int(fields["loop"]), where


def test_finding_8s_completion_path_under_kafka_2_7_takes_16_steps():
    """docs/model.md 11.1, finding 8: under --reassignment-procedure kafka-2.7 the shortest trace in which the
    reassignment completes (ControllerReassignmentIsrChange) after the delete request and then
    deleted_replica_holds_no_data fails with broker 0 up has 16 steps, through the steps the text names."""
    from collections import deque

    import invariants
    from helpers import model_of

    model = model_of("reassignment-deletion", reassignment_procedure="kafka-2.7")
    (holds_no_data,) = select_invariants(["deleted_replica_holds_no_data"])
    init = model.init_states()[0]
    start = (init, False)
    parent = {start: None}
    queue = deque([start])
    goal = None
    while queue and goal is None:
        node = queue.popleft()
        state, completed_after_delete = node
        for action, after in model.successors(state):
            completes = model.rules[action.rule].name == "ControllerReassignmentIsrChange"
            flag = completed_after_delete or (completes and state.controller.deletion[0] != 0)
            nxt = (after, flag)
            if nxt in parent:
                continue
            parent[nxt] = (node, action)
            if flag and after.brokers[0].up and holds_no_data.check(model, after) is not None:
                goal = nxt
                break
            queue.append(nxt)
    assert goal is not None
    labels = []
    while parent[goal] is not None:
        goal, action = parent[goal]
        labels.append(model.rules[action.rule].label(action.args))
    labels.reverse()
    assert len(labels) == 16, labels
    assert _in_order(["CreateTopic(partition=0)", "ReplicaFetch(broker=1, partition=0)", "BrokerCrash(broker=0)",
                      "ControllerBrokerFailure(broker=0)", "BrokerRestart(broker=0)", "DeleteTopic(partition=0)",
                      "ControllerReassignmentIsrChange(partition=0)", "ControllerFailover()",
                      "BrokerStopReplicaDelete(broker=1)", "ControllerStopReplicaResponse(broker=1)"], labels), labels
