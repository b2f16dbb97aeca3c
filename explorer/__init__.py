"""jbodcheck's explorer: search engines, reports and the command line."""
import sys

__version__ = "0.5.0"  # the one place (pyproject.toml reads it as the package version)


class _MovedModules:
    """0.3.x's explorer.render and explorer.report, until 0.6.0: an explorer module no other finder found is asked
    of model/moved.py, imported only then (``jbodcheck --version`` loads no model)."""

    @staticmethod
    def find_spec(fullname, path=None, target=None):
        if not fullname.startswith("explorer."):
            return None
        from model.moved import FINDER
        return FINDER.find_spec(fullname, path, target)


sys.meta_path.append(_MovedModules)
