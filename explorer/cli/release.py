"""`--kafka X.Y[.Z]`, a MODEL option: the Kafka release KRaft mode follows (docs/kraft.md, "What changed from 3.9 to
4.4"; model/kraft/release.py). It sets the option ``kafka`` of KRaft's core feature (as ``--option kafka=...``,
which it replaces), checked here so that a bad value or a ZooKeeper variant is one line, exit 2."""
from __future__ import annotations

import attrs
import click

from model.kraft.release import KAFKA_OPTION, RELEASES, parse

from .exits import BadInput


def _release(ctx, param, value):
    if value is None:
        return None
    if parse(value) is None:
        raise BadInput(f"--kafka {value}: not a release {', '.join(RELEASES)} or a version X.Y.Z of one of them")
    return value.strip()


def kafka_option(f):
    return click.option("--kafka", "kafka_release", default=None, metavar="X.Y[.Z]", callback=_release,
                        help="The Kafka release KRaft mode follows: " + ", ".join(RELEASES) + " (default: "
                             + RELEASES[-1] + ") or a version X.Y.Z, which runs its line with the bugs fixed "
                             "after it (--variant kraft; `jbodcheck bugs` lists them).")(f)


def with_release(cfg, value: str, features) -> object:
    """The configuration with its ``kafka`` option set to ``value``. BadInput when no feature of the design takes
    the option (a ZooKeeper variant)."""
    if not any(o.name == KAFKA_OPTION for f in features for o in f.options):
        raise BadInput("--kafka applies to --variant kraft")
    options = dict(cfg.options)
    options[KAFKA_OPTION] = value
    return attrs.evolve(cfg, options=options)
