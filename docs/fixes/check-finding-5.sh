#!/bin/bash
# Run docs/fixes/Finding5Check.java on Kafka 3.9.2's own controller classes (kafka-metadata 3.9.2 from Maven
# Central): first as released (finding 5: exit 1 expected), then with realkafka/patches/unfence-without-offline-dirs/3.9.2.diff
# compiled in (compile-patch.sh; exit 0 expected). Needs Java 17 and Maven; writes only under a temporary directory
# (or $1). Prints each run's lines and exit code; exits 0 when both runs end as expected.
#
#   docs/fixes/check-finding-5.sh [OUT_DIR]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$(mktemp -d)}
"$here/compile-patch.sh" "$out" > /dev/null || exit 3
cd "$out"
# The classpath Maven gives (kafka-metadata 3.9.2 among its entries) comes after the jar each run names first.
cp=$(cat classpath.txt)
mkdir -p check
javac --release 11 -nowarn -d check -cp "$cp:kafka-metadata-3.9.2.jar" "$here/Finding5Check.java" || exit 3
echo "== Kafka 3.9.2 as released"
java -cp "check:kafka-metadata-3.9.2.jar:$cp" org.apache.kafka.controller.Finding5Check 2>&1 | grep -v '^SLF4J'
released=${PIPESTATUS[0]}
echo "exit $released"
echo "== Kafka 3.9.2 with realkafka/patches/unfence-without-offline-dirs/3.9.2.diff"
java -cp "check:kafka-metadata-3.9.2-unfence-without-offline-dirs.jar:$cp" org.apache.kafka.controller.Finding5Check \
    2>&1 | grep -v '^SLF4J'
patched=${PIPESTATUS[0]}
echo "exit $patched"
[ "$released" = 1 ] && [ "$patched" = 0 ]
