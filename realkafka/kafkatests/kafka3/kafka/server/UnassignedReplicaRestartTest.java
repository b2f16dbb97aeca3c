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
import kafka.test.annotation.ClusterConfigProperty;
import kafka.test.annotation.ClusterTest;
import kafka.test.annotation.ClusterTestDefaults;
import kafka.test.annotation.Type;
import kafka.test.junit.ClusterTestExtensions;
import kafka.log.UnifiedLog;
import kafka.utils.TestUtils;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.DirectoryId;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.metadata.BrokerState;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.server.authorizer.AclCreateResult;
import org.apache.kafka.server.authorizer.AclDeleteResult;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.apache.kafka.server.authorizer.Authorizer;
import org.apache.kafka.server.authorizer.AuthorizerServerInfo;
import org.apache.kafka.server.common.MetadataVersion;

import org.junit.jupiter.api.extension.ExtendWith;

import java.io.File;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
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
@ExtendWith(ClusterTestExtensions.class)
@ClusterTestDefaults(types = {Type.KRAFT}, brokers = 1, disksPerBroker = 2)
public class UnassignedReplicaRestartTest {

    @ClusterTest(metadataVersion = MetadataVersion.IBP_3_9_IV0, serverProperties = {
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
            try (Producer<byte[], byte[]> producer = producer(cluster)) {
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

            Optional<UnifiedLog> log = Optional.ofNullable(broker.logManager().getLog(tp, false).getOrElse(() -> null));
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

    private static PartitionRegistration controllerPartition(ClusterInstance cluster, TopicPartition tp) {
        ControllerServer controller = cluster.controllers().values().iterator().next();
        return controller.metadataCache().currentImage().topics().getTopic(tp.topic()).partitions().get(tp.partition());
    }

    /** As LogDirFailureTest does: the log dir becomes a file, and the next high watermark checkpoint fails. */
    private static File causeLogDirFailure(KafkaBroker broker, TopicPartition tp) {
        return TestUtils.causeLogDirFailure(TestUtils.Checkpoint$.MODULE$, broker, tp);
    }

    private static Producer<byte[], byte[]> producer(ClusterInstance cluster) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
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
