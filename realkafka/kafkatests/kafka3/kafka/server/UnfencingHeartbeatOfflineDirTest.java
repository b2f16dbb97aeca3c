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
import kafka.utils.TestUtils;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.image.MetadataImage;
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
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * A fenced broker's heartbeat that asks to be unfenced and reports a newly failed log dir is handled in one controller
 * event whose records are all computed from the image before the event (ReplicationControlManager
 * .processBrokerHeartbeat): handleBrokerUnfenced elects the broker leader of its leaderless partitions (the dir is
 * still registered, so LeaderAcceptor accepts it), and handleDirectoriesOffline, reading the same image, finds them
 * leaderless and writes no change. The broker is left leading partitions it holds offline, and nothing moves the
 * leader until the broker is fenced or restarted.
 */
@ExtendWith(ClusterTestExtensions.class)
@ClusterTestDefaults(types = {Type.KRAFT}, brokers = 1, disksPerBroker = 2)
public class UnfencingHeartbeatOfflineDirTest {

    @ClusterTest(metadataVersion = MetadataVersion.IBP_3_9_IV0, serverProperties = {
        // the controller answers BrokerHeartbeat with CLUSTER_AUTHORIZATION_FAILED while HOLD is set: the broker
        // keeps running and heartbeating (asking to stay unfenced), and its session expires
        @ClusterConfigProperty(id = 3000, key = "authorizer.class.name",
            value = "kafka.server.UnfencingHeartbeatOfflineDirTest$HoldBrokerHeartbeat")
    })
    public void testBrokerNotLeaderOfPartitionOnDirItsUnfencingHeartbeatReportsOffline(ClusterInstance cluster) throws Exception {
        try {
            KafkaBroker broker = cluster.brokers().get(0);
            TopicPartition tp = createPartitionOutsideMetadataLogDir(cluster, broker);
            String logDir = broker.replicaManager().localLogOrException(tp).parentDir();
            Uuid dirId = broker.logManager().directoryId(logDir).get();
            waitForCondition(() -> dirId.equals(controllerPartition(cluster, tp).directory(0)),
                () -> "the assignment of " + tp + " to " + logDir + " should be delivered");

            HoldBrokerHeartbeat.HOLD.set(true);
            waitForCondition(() -> controllerPartition(cluster, tp).leader == -1,
                () -> "the controller should fence broker 0 when its session expires (no leader for " + tp + ")");
            File failedDir = causeLogDirFailure(broker, tp);
            HoldBrokerHeartbeat.HOLD.set(false);

            // the next heartbeat asks to be unfenced and reports the dir offline
            waitForCondition(() -> !controllerImage(cluster).cluster().broker(0).fenced(), () -> "broker 0 should be unfenced");
            waitForCondition(() -> !controllerImage(cluster).cluster().broker(0).directories().contains(dirId),
                () -> "broker 0's registration should drop " + failedDir);
            waitForCondition(() -> controllerPartition(cluster, tp).leader != 0,
                () -> "broker 0 leads " + tp + " whose log dir " + failedDir + " its unfencing heartbeat reported offline "
                    + "(leader " + controllerPartition(cluster, tp).leader + ", ISR "
                    + Arrays.toString(controllerPartition(cluster, tp).isr) + ", the broker holds it "
                    + broker.replicaManager().getPartition(tp) + ")");
        } finally {
            HoldBrokerHeartbeat.HOLD.set(false);
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

    private static MetadataImage controllerImage(ClusterInstance cluster) {
        return cluster.controllers().values().iterator().next().metadataCache().currentImage();
    }

    private static PartitionRegistration controllerPartition(ClusterInstance cluster, TopicPartition tp) {
        return controllerImage(cluster).topics().getTopic(tp.topic()).partitions().get(tp.partition());
    }

    /** As LogDirFailureTest does: the log dir becomes a file, and the next high watermark checkpoint fails. */
    private static File causeLogDirFailure(KafkaBroker broker, TopicPartition tp) {
        return TestUtils.causeLogDirFailure(TestUtils.Checkpoint$.MODULE$, broker, tp);
    }

    private static void waitForCondition(Supplier<Boolean> condition, Supplier<String> message) {
        kafka.utils.TestUtils.waitUntilTrue(condition::get, message::get, 30_000L, 100L);
    }

    /** Denies BrokerHeartbeat while HOLD is set; allows every other request. */
    public static class HoldBrokerHeartbeat implements Authorizer {
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
            boolean deny = HOLD.get() && context.requestType() == ApiKeys.BROKER_HEARTBEAT.id;
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
