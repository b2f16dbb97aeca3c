#!/bin/bash
# Compile realkafka/patches/unfence-without-offline-dirs/3.9.2.diff (the candidate fix unfence-without-offline-dirs,
# as a change to Kafka 3.9.2's ReplicationControlManager) against Kafka 3.9.2's jars from Maven Central, and build a
# kafka-metadata jar with the patched classes. Needs Java 17 (javac), Maven and network access to Maven Central;
# writes only under a temporary directory (or $1), which it prints. (The harness's own build of the same patch is
# `jbodcheck kafka patch unfence-without-offline-dirs --kafka 3.9.2`, docs/fixes.md.)
#
#   docs/fixes/compile-patch.sh [OUT_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=3.9.2
out=${1:-$(mktemp -d)}
mkdir -p "$out"
cd "$out"

# The classpath of kafka-metadata 3.9.2 (its jar and dependencies), by Maven.
cat > pom.xml <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>jbodcheck.fixes</groupId><artifactId>patch-classpath</artifactId><version>0</version>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-metadata</artifactId><version>$version</version></dependency>
  </dependencies>
</project>
EOF
mvn -q dependency:build-classpath -Dmdep.outputFile=classpath.txt
mvn -q dependency:copy -Dartifact=org.apache.kafka:kafka-metadata:$version:jar:sources -DoutputDirectory=.
mvn -q dependency:copy -Dartifact=org.apache.kafka:kafka-metadata:$version -DoutputDirectory=.

# The source of 3.9.2 laid out as in Kafka's repository, then the patch.
src=metadata/src/main/java/org/apache/kafka/controller/ReplicationControlManager.java
mkdir -p "$(dirname "$src")"
unzip -qo kafka-metadata-$version-sources.jar org/apache/kafka/controller/ReplicationControlManager.java -d sources
cp sources/org/apache/kafka/controller/ReplicationControlManager.java "$src"
patch -p1 < "$here/../../realkafka/patches/unfence-without-offline-dirs/$version.diff"

# Compile the one class (and its nested classes) for Java 11, as Kafka 3.9's metadata module is built.
mkdir -p classes
javac --release 11 -nowarn -d classes -cp "$(cat classpath.txt):kafka-metadata-$version.jar" "$src"

# A copy of kafka-metadata with the patched classes: put it in place of the broker's or controller's
# libs/kafka-metadata-$version.jar.
cp kafka-metadata-$version.jar kafka-metadata-$version-unfence-without-offline-dirs.jar
(cd classes && jar uf ../kafka-metadata-$version-unfence-without-offline-dirs.jar org/apache/kafka/controller/*.class)
echo "$out/kafka-metadata-$version-unfence-without-offline-dirs.jar"
