"""The script to give spark-submit: it runs the jbodcheck CLI in the driver that spark-submit starts.

    python -m spark_explore.package dist/jbodcheck.zip
    spark-submit --master spark://HOST:7077 --py-files dist/jbodcheck.zip explorer/cli/submit.py \\
        explore --engine spark --preset medium --json report.json

The packages come from --py-files (or an installed jbodcheck); see docs/spark.md. spark_explore/submit.py, the
path of earlier versions, still works: it launches this script.
"""
import os
import sys


def main() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    # Run as a script, this directory is sys.path[0]: its modules (model.py, ...) must not shadow top-level names.
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    from explorer.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
