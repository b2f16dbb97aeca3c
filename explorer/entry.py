"""The console script's old entry point (``jbodcheck = explorer.entry:main``), kept for installs made before the
CLI moved to explorer/cli/: it is explorer/cli/entry.py's ``main``."""
from explorer.cli.entry import main  # noqa: F401
