"""jbodcheck's explorer: search engines, reports and the command line."""
__version__ = "0.3.1"
