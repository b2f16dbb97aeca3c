"""Every documented finding is what its command prints (docs/testing.md).

A finding in docs/model.md (section 11; the README too, should it state one) carries a marker, an HTML comment on
one line before its text; tests/support/findings.py reads the markers (their fields are described there) and runs
each one's command.
"""
from __future__ import annotations

import pytest

from support.helpers import REPO
from support.findings import EXIT, check_finding, in_order, label, markers
from explorer.catalog import select_invariants

DOCS = (REPO / "docs" / "model.md", REPO / "README.md")
ALL = [entry for path in DOCS for entry in markers(path)]


def test_the_findings_are_marked():
    counts = {name: sum(1 for entry in ALL if entry[0] == name) for name in ("model.md", "README.md")}
    assert counts["model.md"] >= 12, counts
    for name, line, fields, _after in ALL:
        assert fields["command"].startswith("jbodcheck "), (name, line)
        assert fields.get("result") in EXIT, (name, line, fields)
        assert set(fields) <= {"command", "result", "invariant", "steps", "names", "loop", "states", "depth",
                               "thorough"}, (name, line, fields)


def test_the_marker_parser_reads_fields_and_order():
    assert in_order(["A", "C"], ["A", "B", "C"]) and not in_order(["C", "A"], ["A", "B", "C"])
    assert label("CreateTopic(partition=0) + UpdateMetadata at broker 1") == "CreateTopic(partition=0)"


@pytest.mark.parametrize("name, line, fields, after", ALL, ids=[f"{e[0]}:{e[1]}" for e in ALL])
def test_a_finding_is_what_its_command_prints(name, line, fields, after, tmp_path):
    check_finding(name, line, fields, after, tmp_path)


@pytest.mark.long_run
def test_finding_8s_completion_path_under_kafka_2_7_takes_16_steps():
    """docs/model.md 11.1, finding 8: under --reassignment-procedure kafka-2.7 the shortest trace in which the
    reassignment completes (ControllerReassignmentIsrChange) after the delete request and then
    deleted_replica_holds_no_data fails with broker 0 up has 16 steps, through the steps the text names."""
    from collections import deque

    import invariants
    from support.helpers import model_of

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
    assert in_order(["CreateTopic(partition=0)", "ReplicaFetch(broker=1, partition=0)", "BrokerCrash(broker=0)",
                      "ControllerBrokerFailure(broker=0)", "BrokerRestart(broker=0)", "DeleteTopic(partition=0)",
                      "ControllerReassignmentIsrChange(partition=0)", "ControllerFailover()",
                      "BrokerStopReplicaDelete(broker=1)", "ControllerStopReplicaResponse(broker=1)"], labels), labels
