"""jbodcheck's explorer: search engines, reports and the command line."""
__version__ = "0.5.0"  # the one place (pyproject.toml reads it as the package version)
