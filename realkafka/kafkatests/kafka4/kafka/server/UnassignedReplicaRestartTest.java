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

import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.DirectoryId;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.test.ClusterInstance;
import org.apache.kafka.common.test.api.ClusterConfigProperty;
import org.apache.kafka.common.test.api.ClusterTest;
import org.apache.kafka.common.test.api.ClusterTestDefaults;
import org.apache.kafka.common.test.api.Type;
import org.apache.kafka.metadata.BrokerState;
import org.apache.kafka.storage.internals.log.UnifiedLog;

import java.io.File;
import java.util.Map;
import java.util.Optional;

import static kafka.server.JbodTestUtils.causeLogDirFailure;
import static kafka.server.JbodTestUtils.controllerPartition;
import static kafka.server.JbodTestUtils.createPartitionOutsideMetadataLogDir;
import static kafka.server.JbodTestUtils.waitForCondition;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A broker creates a new replica's log before the controller knows its directory: the PartitionRecord names the
 * directory UNASSIGNED, and AssignmentsManager reports the real one later (AssignReplicasToDirs), from memory. If the
 * broker stops before that report is answered and starts again with the replica's log dir failed, its first
 * metadata delta lists the replica with UNASSIGNED again, and Partition.createLogInAssignedDirectoryId creates a
 * new, empty log on a healthy dir (UNASSIGNED passes its check even while a dir is offline). As the partition's only
 * ISR member, the broker is elected when it is unfenced, and the acknowledged records are lost.
 */
@ClusterTestDefaults(types = {Type.KRAFT}, brokers = 1, disksPerBroker = 2)
public class UnassignedReplicaRestartTest {

    @ClusterTest(serverProperties = {
        // the controller answers AssignReplicasToDirs with CLUSTER_AUTHORIZATION_FAILED while the test holds it, so
        // that the broker's assignment stays undelivered (AssignmentsManager retries it)
        @ClusterConfigProperty(id = 3000, key = "authorizer.class.name",
            value = "kafka.server.HoldRequestsAuthorizer")
    })
    public void testReplicaWithUndeliveredAssignmentNotRecreatedOverOfflineDir(ClusterInstance cluster) throws Exception {
        HoldRequestsAuthorizer.hold(ApiKeys.ASSIGN_REPLICAS_TO_DIRS);
        try {
            KafkaBroker broker = cluster.brokers().get(0);
            TopicPartition tp = createPartitionOutsideMetadataLogDir(cluster, broker);
            assertEquals(DirectoryId.UNASSIGNED, controllerPartition(cluster, tp).directory(0),
                "the assignment of " + tp + " should be held");

            RecordMetadata acked;
            try (Producer<byte[], byte[]> producer = cluster.producer(Map.of(ProducerConfig.ACKS_CONFIG, "all"))) {
                acked = producer.send(new ProducerRecord<>(tp.topic(), tp.partition(), null, "acked".getBytes())).get();
            }

            File failedDir = causeLogDirFailure(broker, tp);
            cluster.shutdownBroker(0);
            waitForCondition(() -> controllerPartition(cluster, tp).leader == -1,
                () -> "the controller should fence broker 0 (no leader for " + tp + ")");
            assertEquals(DirectoryId.UNASSIGNED, controllerPartition(cluster, tp).directory(0));

            // the failed dir is still a file: the broker starts with it offline (MetaPropertiesEnsemble error dir)
            cluster.startBroker(0);
            waitForCondition(() -> broker.brokerState() == BrokerState.RUNNING, () -> "broker 0 should be running");
            assertFalse(broker.logManager().isLogDirOnline(failedDir.getAbsolutePath()));

            Optional<UnifiedLog> log = broker.logManager().getLog(tp);
            assertTrue(log.isEmpty() || log.get().logEndOffset() > acked.offset(),
                "broker 0 re-created " + tp + " on " + log.map(UnifiedLog::parentDir).orElse("?")
                    + " with log end offset " + log.map(UnifiedLog::logEndOffset).orElse(-1L)
                    + " while its log dir " + failedDir + " is offline; the record acknowledged at offset "
                    + acked.offset() + " is lost (leader " + controllerPartition(cluster, tp).leader + ")");
        } finally {
            HoldRequestsAuthorizer.release(ApiKeys.ASSIGN_REPLICAS_TO_DIRS);
        }
    }
}
