/*
 * Licensed to the Apache Software Foundation (ASF) under one or more
 * contributor license agreements. See the NOTICE file distributed with
 * this work for additional information regarding copyright ownership.
 * The ASF licenses this file to You under the Apache License, Version 2.0
 * (the "License"); you may not use this file except in compliance with
 * the License. You may obtain a copy of the License at
 *
 *    http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */
package kafka.server;

import kafka.test.ClusterInstance;
import kafka.utils.TestUtils;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.metadata.PartitionRegistration;

import java.io.File;
import java.util.List;
import java.util.function.Supplier;

/** What the JBOD regression tests share: a partition outside the metadata log's dir, the controller's view, a failed dir. */
final class JbodTestUtils {
    private JbodTestUtils() {
    }

    /**
     * Two single-partition topics: a new log goes to the log dir with the fewest logs, so one of them is on a dir
     * that does not hold the metadata log (whose failure halts the broker instead).
     */
    static TopicPartition createPartitionOutsideMetadataLogDir(ClusterInstance cluster, KafkaBroker broker) throws Exception {
        try (Admin admin = cluster.createAdminClient()) {
            admin.createTopics(List.of(new NewTopic("foo", 1, (short) 1), new NewTopic("bar", 1, (short) 1))).all().get();
        }
        cluster.waitForTopic("foo", 1);
        cluster.waitForTopic("bar", 1);
        String metadataLogDir = new File(broker.config().metadataLogDir()).getAbsolutePath();
        for (String topic : List.of("foo", "bar")) {
            TopicPartition tp = new TopicPartition(topic, 0);
            waitForCondition(() -> broker.logManager().getLog(tp, false).isDefined(), () -> "no log for " + tp);
            if (!new File(broker.logManager().getLog(tp, false).get().parentDir()).getAbsolutePath().equals(metadataLogDir)) {
                return tp;
            }
        }
        throw new AssertionError("both partitions are in the metadata log dir " + metadataLogDir);
    }

    static MetadataImage controllerImage(ClusterInstance cluster) {
        return cluster.controllers().values().iterator().next().metadataCache().currentImage();
    }

    static PartitionRegistration controllerPartition(ClusterInstance cluster, TopicPartition tp) {
        return controllerImage(cluster).topics().getTopic(tp.topic()).partitions().get(tp.partition());
    }

    /** As LogDirFailureTest does: the log dir becomes a file, and the next high watermark checkpoint fails. */
    static File causeLogDirFailure(KafkaBroker broker, TopicPartition tp) {
        return TestUtils.causeLogDirFailure(TestUtils.Checkpoint$.MODULE$, broker, tp);
    }

    static void waitForCondition(Supplier<Boolean> condition, Supplier<String> message) {
        kafka.utils.TestUtils.waitUntilTrue(condition::get, message::get, 30_000L, 100L);
    }
}
