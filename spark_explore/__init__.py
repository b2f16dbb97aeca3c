"""jbodcheck's Spark engine: the level-synchronous BFS of explorer.search.bfs, partitioned by fingerprint over a
Spark cluster (docs/spark.md). Importing this package does not import pyspark; running a search does."""
from model.spec.engine import collision_probability

from .engine import SparkRunError, SparkSearchResult, explore_spark
from .options import SparkOptions, SparkSetupError

__all__ = ["SparkOptions", "SparkRunError", "SparkSearchResult", "SparkSetupError", "collision_probability",
           "explore_spark"]
