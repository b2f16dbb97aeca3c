"""The script path for spark-submit of earlier versions (docs/spark.md): it launches explorer/cli/submit.py, the
driver script, by module name. It is a script, not a module of the spark_explore package (nothing imports it), so
the package itself imports nothing from explorer/."""
import os
import runpy
import sys

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    # Run as a script, this directory is sys.path[0]: its modules must not shadow top-level names.
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    runpy.run_module("explorer.cli.submit", run_name="__main__", alter_sys=True)
