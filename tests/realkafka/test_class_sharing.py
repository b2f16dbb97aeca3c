"""Class-data sharing for the nodes' JVMs (realkafka/cluster/sharing.py), without a JVM: the class path's directories
become jars of the same classes, a kind with an archive maps it, one without trains one JVM, and only an archive a
JVM wrote at its own exit is kept."""
from __future__ import annotations

import os
import zipfile

from realkafka.cluster.sharing import Sharing


def _release(tmp_path):
    home = tmp_path / "3.9.2"
    (home / "classes" / "jbodcheck").mkdir(parents=True)
    (home / "classes" / "jbodcheck" / "Gate.class").write_bytes(b"\xca\xfe\xba\xbe gate")
    (home / "libs").mkdir()
    (home / "empty").mkdir()
    java = tmp_path / "java"
    java.write_text("#!/bin/sh\n")
    return home, os.pathsep.join([str(home / "classes"), str(home / "empty"), f"{home / 'libs'}/*"]), str(java)


def test_the_class_path_has_a_jar_in_place_of_each_directory_of_classes(tmp_path):
    home, classpath, java = _release(tmp_path)
    s = Sharing(home, classpath, java)
    jar, empty, libs = s.classpath.split(os.pathsep)
    assert jar.endswith(".jar") and empty == str(home / "empty") and libs == f"{home / 'libs'}/*"
    with zipfile.ZipFile(jar) as z:
        assert z.read("jbodcheck/Gate.class") == b"\xca\xfe\xba\xbe gate"
    assert Sharing(home, classpath, java).classpath == s.classpath          # built once per content
    (home / "classes" / "jbodcheck" / "Probe.class").write_bytes(b"\xca\xfe\xba\xbe probe")
    assert Sharing(home, classpath, java).classpath != s.classpath
    assert Sharing(home, classpath + ":patched.jar", java).home != s.home    # another class path, other archives


def test_one_jvm_of_a_kind_trains_and_only_an_archive_written_at_its_exit_is_kept(tmp_path):
    home, classpath, java = _release(tmp_path)
    s = Sharing(home, classpath, java)
    options, out = s.options("broker", "0-1")
    assert options == [f"-XX:ArchiveClassesAtExit={out}"] and s.trains
    assert s.options("broker", "1-1") == ([], None)
    _, controller_out = s.options("controller", "1000-1")
    out.write_bytes(b"archive")
    controller_out.write_bytes(b"killed before its exit: not kept")
    assert s.keep({"broker": [out]}) == ["broker"] and not s.trains
    assert not controller_out.exists() and not s.archive("controller").exists()
    again = Sharing(home, classpath, java)
    assert again.options("broker", "0-1") == ([f"-XX:SharedArchiveFile={s.archive('broker')}"], None)
    assert again.options("controller", "1000-1")[1] is not None                 # not archived yet: trains again
