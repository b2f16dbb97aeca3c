"""`jbodcheck kafka fetch VERSION...`: fetch Kafka releases for the real-cluster harness (docs/realkafka.md).

Maven fetches each release's jars into ``$JBODCHECK_KAFKA_CACHE`` (default ``~/.cache/jbodcheck/kafka``), and
javac compiles the harness's gate and probe against them; a release already there is not fetched again. A version
is X.Y.Z, or X.Y for its line's newest patch (as `reproduce --kafka`). Exit codes: 0 fetched; 2 a version the
harness does not run, no such release (known here, or Maven Central does not serve it), or a cache that cannot be
used; 3 Maven, Java or the registry failed (one line).
"""
from __future__ import annotations

import click

from explorer.errors import JbodcheckFailure

from .exits import EXIT_OK, EXIT_VIOLATION, BadInput


@click.group("kafka")
def kafka_group():
    """Real Kafka releases for the real-cluster harness (docs/realkafka.md)."""


@kafka_group.command("fetch")
@click.argument("versions", nargs=-1, required=True, metavar="VERSION...")
def fetch_command(versions):
    """Fetch Kafka releases with Maven into the cache and build the harness's helpers against them: one line per
    release, its version and its jars' directory (jbodcheck kafka fetch 3.9.2 4.0.2 4.4.0)."""
    from realkafka.cluster import HarnessError, fetch
    from realkafka.cluster.release import resolve

    try:
        releases = [resolve(version) for version in versions]
    except ValueError as e:
        raise BadInput(str(e)) from None
    for version in dict.fromkeys(releases):
        try:
            release = fetch(version, log=lambda line: click.echo(f"jbodcheck: {line}", err=True))
        except HarnessError as e:
            raise (BadInput if e.bad_input else JbodcheckFailure)(str(e)) from None
        click.echo(f"{release.version} {release.libs}")
    return EXIT_OK


@kafka_group.command("patch")
@click.argument("fix", metavar="FIX")
@click.option("--kafka", "kafka", required=True, metavar="VERSION",
              help="The release whose source the fix's patch is applied to (X.Y.Z, or X.Y: its newest patch).")
@click.option("--check", is_flag=True,
              help="Only check that the patch applies to the release's source (patch --dry-run); build nothing.")
@click.option("--check-port", is_flag=True,
              help="Also compile the release's UNPATCHED source (for 4.4.0: 4.3.1's with the port) and compare its "
                   "classes with the release's own (byte-identical or javap -c -p identical).")
def patch_command(fix, kafka, check, check_port):
    """The jar of a candidate fix's patched Kafka classes for a release, built in the cache on first use: prints its
    path (put it ahead of the release's jars on the classpath; docs/fixes.md, "On Kafka's own code")."""
    from realkafka.cluster import HarnessError
    from realkafka.cluster.release import resolve
    from realkafka.patches import SOURCES, PatchError, check_port as port_differences, patched_jar, patched_source

    try:
        release = resolve(kafka)
    except ValueError as e:
        raise BadInput(f"--kafka: {e}") from None
    if fix not in SOURCES:
        raise BadInput(f"no patch of Kafka's code for the fix {fix!r} (patched: {', '.join(SOURCES)})")
    log = lambda line: click.echo(f"jbodcheck: {line}", err=True)  # noqa: E731
    try:
        if check_port:
            differ = port_differences(SOURCES[fix], release, log=log)
            if differ:
                raise JbodcheckFailure(f"Kafka {release}'s {SOURCES[fix].path} as the harness has it does not "
                                       f"compile to the release's classes: {'; '.join(differ[:3])}")
            click.echo(f"jbodcheck: {SOURCES[fix].path} of Kafka {release} compiles to the release's own classes",
                       err=True)
        if check:
            patched_source(fix, release, dry_run=True)
            click.echo(f"realkafka/patches/{fix}/{release}.diff applies to Kafka {release}'s {SOURCES[fix].path}")
            return EXIT_OK
        click.echo(patched_jar(fix, release, log=log))
    except PatchError as e:
        raise (BadInput if "has no patch" in str(e) else JbodcheckFailure)(str(e)) from None
    except HarnessError as e:
        raise (BadInput if e.bad_input else JbodcheckFailure)(str(e)) from None
    return EXIT_OK


@kafka_group.command("test")
@click.argument("finding", type=int, metavar="FINDING")
@click.option("--kafka", "kafka", required=True, metavar="VERSION",
              help="The release whose jars the test runs on (X.Y.Z, or X.Y: its newest patch; 3.9.x or 4.x).")
@click.option("--fix", "fix", default=None, metavar="NAME",
              help="A fix of the finding with a patch of Kafka's code (jbodcheck fixes): its patched classes go "
                   "ahead of the release's jars.")
def test_command(finding, kafka, fix):
    """Run a finding's Kafka-native regression test (a JUnit 5 test on Kafka's own test kit, docs/kafka-tests.md)
    with Maven on a release, unpatched or with a fix's patch: one line; exit 1 when the test fails (the bug
    shows), 0 when it passes."""
    from model.kraft.fixes import FIXES
    from realkafka.cluster import HarnessError
    from realkafka.cluster.release import resolve
    from realkafka.kafkatests import kit_line, run, class_of

    try:
        release = resolve(kafka)
        kit_line(release)
        class_of(finding)
    except ValueError as e:
        raise BadInput(str(e) if str(e).startswith("finding") else f"--kafka: {e}") from None
    if fix is not None and fix not in FIXES:
        raise BadInput(f"--fix {fix}: no such fix (jbodcheck fixes lists them)")
    if fix is not None and finding not in FIXES[fix].findings:
        raise BadInput(f"--fix {fix} is a fix of finding {', '.join(map(str, FIXES[fix].findings))}, "
                       f"not of finding {finding}")
    try:
        result = run(finding, release, fix=fix, log=lambda line: click.echo(f"jbodcheck: {line}", err=True))
    except ValueError as e:
        raise BadInput(str(e)) from None
    except HarnessError as e:
        raise (BadInput if e.bad_input or "has no patch" in str(e) else JbodcheckFailure)(str(e)) from None
    click.echo(result.line())
    return EXIT_OK if result.passed else EXIT_VIOLATION
