"""A replaced disk gets a new directory.id in KRaft mode (docs/kraft.md, "State"; docs/conform.md, disagreement 5;
scenarios/kraft-conform-replaced-disk-gets-a-new-id.json): the broker registers the new id, and a Directories entry
still naming the old disk names a dir the broker no longer has."""
from __future__ import annotations

from explorer.catalog import build_model, preset_config
from support.helpers import run_labels
from model.kraft.controller import leader_acceptor, online
from model.kraft.disks import id_of, index_of
from model.kraft.metadata import UNASSIGNED, dir_id, dir_name
from model.kraft.render import FORMATS, dir_names
from model.kraft.replica_manager import gate2_allows
from model.kraft.rules import controller_image
from model.kraft.symmetry import permute_index_refs
from model.storage.state import GOOD, OFFLINE
from realkafka.driver.projection import project

# The scenario's steps (kraft-tiny-faults at 3.9.2): broker 1 down and fenced, its dir 0 failed and replaced.
REPLACED = ["BrokerCrash(broker=1)", "ControllerFenceBroker(broker=1)", "BrokerReplay(broker=0)",
            "DirFail(broker=1, dir=0)", "ReplaceDisk(broker=1, dir=0)"]
# A topic whose replicas' Directories name the dirs their logs are on (each broker assigned its dir).
ASSIGNED = ["CreateTopic(partition=0)", "BrokerReplay(broker=0)", "BrokerReplay(broker=1)",
            "BrokerSendAssignments(broker=0)", "BrokerSendAssignments(broker=1)",
            "ControllerAssignReplicasToDirs(broker=0)", "ControllerAssignReplicasToDirs(broker=1)"]


def _model(**options):
    return build_model(preset_config("kraft-tiny-faults", options={"kafka": "3.9.2", **options}))


def test_a_replaced_disk_has_a_new_id_and_the_registration_keeps_the_old_one_until_the_broker_registers():
    m = _model()
    s = run_labels(m, REPLACED)
    b = s.brokers[1]
    assert b.dirs == (GOOD, GOOD) and b.disks == (1, 0)
    assert id_of(b, 0) == dir_id(0, 1) != 0 and index_of(b, 0) == -1 and index_of(b, dir_id(0, 1)) == 0
    assert s.controller.registrations[1].dirs == (0, 1)   # the old disk's id: no dir of the broker any more
    # What the real cluster showed: broker 1's registration lists dirs {1} (the old id is none of its dirs).
    assert project(m, s).registrations[1].dirs == frozenset({1})
    s = run_labels(m, ["BrokerRestart(broker=1)", "BrokerRegister(broker=1)"], s)
    assert s.controller.registrations[1].dirs == (1, dir_id(0, 1))
    assert dir_names(s.controller.registrations[1].dirs) == ["dir 1", "dir 0'"]
    assert project(m, s).registrations[1].dirs == frozenset({0, 1})


def test_zookeeper_mode_has_no_dir_ids_its_replaced_disk_is_as_before():
    m = build_model(preset_config("tiny"))
    s = run_labels(m, ["DirFail(broker=1, dir=0)", "BrokerCrash(broker=1)", "ReplaceDisk(broker=1, dir=0)"])
    assert "disks" not in s.brokers[1]._fields and s.brokers[1].dirs[0] == GOOD


def test_a_directories_entry_naming_the_old_disk_is_offline_and_the_restarted_broker_assigns_its_new_dir():
    m = _model()
    s = run_labels(m, ASSIGNED)
    d = s.controller.partitions[0].dirs[s.controller.partitions[0].replicas.index(1)]
    assert d >= 0 and s.brokers[1].copies[0] == 1 << d
    s = run_labels(m, ["BrokerCrash(broker=1)", "ControllerFenceBroker(broker=1)", f"DirFail(broker=1, dir={d})",
                       f"ReplaceDisk(broker=1, dir={d})", "BrokerRestart(broker=1)", "BrokerRegister(broker=1)"], s)
    image = controller_image(s)
    reg = image.registrations[1]
    assert dir_id(d, 1) in reg.dirs and d not in reg.dirs
    # DirectoryId.isOnline: the entry names the old disk, registered no more: LeaderAcceptor refuses broker 1.
    assert not online(m, d, reg.dirs)
    unfenced = image._replace(registrations=(image.registrations[0], reg._replace(fenced=False)))
    assert not leader_acceptor(m, unfenced, 0, 1)
    # Partition.createLogInAssignedDirectoryId: the old id is no online dir here (LogManager.onlineLogDirId).
    b = s.brokers[1]
    other_offline = b._replace(dirs=(OFFLINE, GOOD) if d else (GOOD, OFFLINE))
    assert not gate2_allows(other_offline, d) and gate2_allows(other_offline, id_of(b, d))
    # The restarted broker creates the replica (no dir offline), on a dir of its own choice, and assigns it.
    s = run_labels(m, ["BrokerLoad(broker=1)"], s)
    b = s.brokers[1]
    actual = next(x for x in range(2) if b.copies[0] >> x & 1)
    assert b.queue == ((0, id_of(b, actual), 1),)
    s = run_labels(m, ["BrokerSendAssignments(broker=1)", "ControllerAssignReplicasToDirs(broker=1)"], s)
    part = s.controller.partitions[0]
    assert part.dirs[part.replicas.index(1)] == id_of(b, actual)


def test_the_ids_read_by_name_the_new_disk_apart_from_the_old():
    assert [dir_name(dir_id(0)), dir_name(dir_id(0, 1)), dir_name(dir_id(1, 2)), dir_name(UNASSIGNED)] == [
        "dir 0", "dir 0'", "dir 1''", "UNASSIGNED"]
    m = _model()
    s = run_labels(m, REPLACED)
    assert FORMATS["kraft_dir_ids"](m, s.brokers[1].disks) == ["dir 0'", "dir 1"]


def test_the_real_views_names_of_a_replaced_disks_old_and_new_ids():
    m = _model()
    s = run_labels(m, ASSIGNED)
    d = s.controller.partitions[0].dirs[s.controller.partitions[0].replicas.index(1)]
    s = run_labels(m, ["BrokerCrash(broker=1)", "ControllerFenceBroker(broker=1)", f"DirFail(broker=1, dir={d})",
                       f"ReplaceDisk(broker=1, dir={d})"], s)
    view = project(m, s)
    # The harness names the old id "dir d of broker b before its replacement" and the new one dir d.
    assert view.partitions["t0"].directory(1) == f"dir {d} of broker 1 before its replacement"
    assert view.registrations[1].dirs == frozenset({1 - d})
    # The real side keeps the harness's name of the old id (an unknown id would read "unknown dir id ...").
    from realkafka.driver.observed import _entry
    assert _entry(f"dir {d} of broker 1 before its replacement") == view.partitions["t0"].directory(1)


def test_a_dir_rename_keeps_a_replaced_disks_ids_with_their_dir():
    m = _model(dir_symmetry=True)
    s = run_labels(m, REPLACED + ["BrokerRestart(broker=1)", "BrokerRegister(broker=1)"])
    swapped = permute_index_refs(m, s, ((0, 1), (1, 0)))
    assert swapped.controller.registrations[1].dirs == (0, dir_id(1, 1))
    assert s.controller.registrations[0] == swapped.controller.registrations[0]
