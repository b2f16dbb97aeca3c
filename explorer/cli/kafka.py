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

from .exits import EXIT_OK, BadInput


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
