"""Kafka-native regression tests of the findings (docs/kafka-tests.md): JUnit 5 tests in Kafka's own style, on
Kafka's published test kit, that Maven runs against a release's jars (``realkafka/kafkatests/pom.xml``), the
release's unpatched classes or a fix's patched ones (realkafka/patches) ahead of them.

    from realkafka.kafkatests import run
    result = run(1, "4.4.0", fix="gate2-strict")      # result.passed, result.line()

Like realkafka/cluster/, this package knows Kafka, not the model.
"""
from .runner import CHECKED, TESTS, KafkaTestResult, kit_line, read_report, run, class_of

__all__ = ["CHECKED", "TESTS", "KafkaTestResult", "kit_line", "read_report", "run", "class_of"]
