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
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.test.ClusterInstance;
import org.apache.kafka.common.test.api.ClusterConfigProperty;
import org.apache.kafka.common.test.api.ClusterTest;
import org.apache.kafka.common.test.api.ClusterTestDefaults;
import org.apache.kafka.common.test.api.Type;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.metadata.BrokerState;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.server.authorizer.AclCreateResult;
import org.apache.kafka.server.authorizer.AclDeleteResult;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.apache.kafka.server.authorizer.Authorizer;
import org.apache.kafka.server.authorizer.AuthorizerServerInfo;
import org.apache.kafka.storage.internals.log.UnifiedLog;

import java.io.File;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import java.util.stream.Collectors;

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
        // the controller answers AssignReplicasToDirs with CLUSTER_AUTHORIZATION_FAILED while HOLD is set, so that
        // the broker's assignment stays undelivered (AssignmentsManager retries it) for as long as the test needs
        @ClusterConfigProperty(id = 3000, key = "authorizer.class.name",
            value = "kafka.server.UnassignedReplicaRestartTest$HoldAssignReplicasToDirs")
    })
    public void testReplicaWithUndeliveredAssignmentNotRecreatedOverOfflineDir(ClusterInstance cluster) throws Exception {
        HoldAssignReplicasToDirs.HOLD.set(true);
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
            HoldAssignReplicasToDirs.HOLD.set(false);
        }
    }

    /**
     * Two single-partition topics: a new log goes to the log dir with the fewest logs, so one of them is on a dir
     * that does not hold the metadata log (whose failure halts the broker instead).
     */
    private static TopicPartition createPartitionOutsideMetadataLogDir(ClusterInstance cluster,
                                                                       KafkaBroker broker) throws Exception {
        cluster.createTopic("foo", 1, (short) 1);
        cluster.createTopic("bar", 1, (short) 1);
        String metadataLogDir = new File(broker.config().metadataLogDir()).getAbsolutePath();
        for (String topic : List.of("foo", "bar")) {
            TopicPartition tp = new TopicPartition(topic, 0);
            waitForCondition(() -> broker.logManager().getLog(tp).isPresent(), () -> "no log for " + tp);
            if (!new File(broker.logManager().getLog(tp).get().parentDir()).getAbsolutePath().equals(metadataLogDir)) {
                return tp;
            }
        }
        throw new AssertionError("both partitions are in the metadata log dir " + metadataLogDir);
    }

    private static PartitionRegistration controllerPartition(ClusterInstance cluster, TopicPartition tp) {
        ControllerServer controller = cluster.controllers().values().iterator().next();
        return controller.metadataCache().currentImage().topics().getTopic(tp.topic()).partitions().get(tp.partition());
    }

    /** As LogDirFailureTest.causeLogDirFailure(Checkpoint, ...): the log dir becomes a file. */
    private static File causeLogDirFailure(KafkaBroker broker, TopicPartition tp) throws Exception {
        File logDir = broker.replicaManager().localLogOrException(tp).dir().getParentFile();
        Utils.delete(logDir);
        Files.createFile(logDir.toPath());
        assertTrue(logDir.isFile());
        broker.replicaManager().checkpointHighWatermarks();
        waitForCondition(() -> !broker.logManager().isLogDirOnline(logDir.getAbsolutePath()),
            () -> "Expected log directory offline");
        return logDir;
    }

    private static void waitForCondition(Supplier<Boolean> condition, Supplier<String> message) {
        kafka.utils.TestUtils.waitUntilTrue(condition::get, message::get, 30_000L, 100L);
    }

    /** Denies AssignReplicasToDirs while HOLD is set; allows every other request. */
    public static class HoldAssignReplicasToDirs implements Authorizer {
        static final AtomicBoolean HOLD = new AtomicBoolean(false);

        @Override
        public void configure(Map<String, ?> configs) {
        }

        @Override
        public Map<org.apache.kafka.common.Endpoint, ? extends CompletionStage<Void>> start(AuthorizerServerInfo serverInfo) {
            return serverInfo.endpoints().stream()
                .collect(Collectors.toMap(e -> e, e -> CompletableFuture.completedFuture(null)));
        }

        @Override
        public List<AuthorizationResult> authorize(AuthorizableRequestContext context, List<Action> actions) {
            boolean deny = HOLD.get() && context.requestType() == ApiKeys.ASSIGN_REPLICAS_TO_DIRS.id;
            return actions.stream()
                .map(a -> deny ? AuthorizationResult.DENIED : AuthorizationResult.ALLOWED)
                .collect(Collectors.toList());
        }

        @Override
        public List<? extends CompletionStage<AclCreateResult>> createAcls(AuthorizableRequestContext context,
                                                                          List<AclBinding> aclBindings) {
            throw new UnsupportedOperationException();
        }

        @Override
        public List<? extends CompletionStage<AclDeleteResult>> deleteAcls(AuthorizableRequestContext context,
                                                                          List<AclBindingFilter> filters) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Iterable<AclBinding> acls(AclBindingFilter filter) {
            return List.of();
        }

        @Override
        public void close() {
        }
    }
}
