"""Numeric option types: a number of seconds is finite (click's FloatRange lets nan through every bound, and inf
past a lower one)."""
from __future__ import annotations

import math

import click


class Seconds(click.FloatRange):
    """A finite number of seconds, at least ``min``."""

    name = "seconds"

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number of seconds", param, ctx)
        return number
