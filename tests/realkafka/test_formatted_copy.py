"""A cluster's dirs copied from a tree formatted once (realkafka/cluster/formatted.py): every copy is what a fresh
format writes (its own cluster.id and directory.ids), the tree is built once per key, a damaged entry is built again,
and a failed build leaves nothing behind. The storage tool is stood in for by a function that writes what it writes."""
from __future__ import annotations

import itertools

import pytest

from realkafka.cluster import formatted

RELATIVE = formatted.data_dirs(2, 2)


def _props(path):
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line and not line.startswith("#"))


def _tool(calls):
    """Writes, per data dir, what the storage tool writes: meta.properties (random ids) and the bootstrap file."""
    counter = itertools.count()

    def format_into(path):
        calls.append(path)
        for r in RELATIVE:
            (path / r).mkdir(parents=True)
            (path / r / "meta.properties").write_text(
                f"#\n#today\nnode.id=7\ndirectory.id=tool-{next(counter)}\nversion=1\ncluster.id=formatted\n")
            (path / r / "bootstrap.checkpoint").write_bytes(b"\x00features")
    return format_into


def test_each_copy_has_its_own_cluster_and_directory_ids_and_the_tree_is_formatted_once(tmp_path):
    calls, fresh = [], itertools.count()
    entry = tmp_path / "cache" / formatted.key(release="3.9.2", classpath="cp", brokers=2, dirs=2, arguments=[],
                                               settings={})
    seen = set()
    for n in range(2):
        root = tmp_path / f"cluster-{n}"
        formatted.copy_formatted(root, entry, RELATIVE, _tool(calls), cluster_id=f"c{n}",
                                 new_id=lambda: f"d{next(fresh)}")
        metas = [_props(root / r / "meta.properties") for r in RELATIVE]
        assert {m["cluster.id"] for m in metas} == {f"c{n}"}
        assert {m["node.id"] for m in metas} == {"7"} and {m["version"] for m in metas} == {"1"}
        ids = {m["directory.id"] for m in metas}
        assert len(ids) == len(RELATIVE) and not ids & seen
        seen |= ids
        assert (root / RELATIVE[0] / "bootstrap.checkpoint").read_bytes() == b"\x00features"
    assert len(calls) == 1
    assert [p.name for p in entry.parent.iterdir()] == [entry.name]        # no build dir left


def test_a_damaged_entry_is_formatted_again_and_a_failed_build_leaves_nothing(tmp_path):
    calls = []
    entry = tmp_path / "cache" / "k"
    formatted.copy_formatted(tmp_path / "a", entry, RELATIVE, _tool(calls), cluster_id="c", new_id=lambda: "d")
    (entry / RELATIVE[-1] / "meta.properties").unlink()
    formatted.copy_formatted(tmp_path / "b", entry, RELATIVE, _tool(calls), cluster_id="c", new_id=lambda: "d")
    assert len(calls) == 2 and (entry / RELATIVE[-1] / "meta.properties").is_file()

    def broken(path):
        path.mkdir(parents=True)
        raise OSError(28, "No space left on device")
    with pytest.raises(OSError):
        formatted.copy_formatted(tmp_path / "c", tmp_path / "cache2" / "k", RELATIVE, broken, cluster_id="c",
                                 new_id=lambda: "d")
    assert list((tmp_path / "cache2").iterdir()) == []


def test_the_key_changes_with_whatever_the_format_depends_on():
    base = dict(release="3.9.2", classpath="cp", brokers=2, dirs=2, arguments=[], settings={})
    keys = {formatted.key(**base)}
    for change in [dict(release="4.4.0"), dict(classpath="patched:cp"), dict(brokers=3), dict(dirs=1),
                   dict(arguments=["--release-version", "3.6-IV2"]), dict(settings={"a": {"x": "1"}})]:
        keys.add(formatted.key(**{**base, **change}))
    assert len(keys) == 7
