"""`jbodcheck kafka fetch VERSION...`: fetch Kafka releases for the real-cluster harness (docs/realkafka.md).

Maven fetches each release's jars into ``$JBODCHECK_KAFKA_CACHE`` (default ``~/.cache/jbodcheck/kafka``), and
javac compiles the harness's gate and probe against them; a release already there is not fetched again.
Exit codes: 0 fetched, 2 a version the harness does not run, 3 Maven, Java or the registry failed (one line).
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
    from realkafka.cluster.release import parse_version

    for version in versions:
        try:
            parse_version(version)
        except ValueError as e:
            raise BadInput(str(e)) from None
    for version in versions:
        try:
            release = fetch(version, log=lambda line: click.echo(f"jbodcheck: {line}", err=True))
        except HarnessError as e:
            raise JbodcheckFailure(str(e)) from None
        click.echo(f"{release.version} {release.libs}")
    return EXIT_OK
