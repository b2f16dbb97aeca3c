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

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.test.ClusterInstance;
import org.apache.kafka.common.test.api.ClusterConfigProperty;
import org.apache.kafka.common.test.api.ClusterTest;
import org.apache.kafka.common.test.api.ClusterTestDefaults;
import org.apache.kafka.common.test.api.Type;

import java.io.File;
import java.util.Arrays;

import static kafka.server.JbodTestUtils.causeLogDirFailure;
import static kafka.server.JbodTestUtils.controllerImage;
import static kafka.server.JbodTestUtils.controllerPartition;
import static kafka.server.JbodTestUtils.createPartitionOutsideMetadataLogDir;
import static kafka.server.JbodTestUtils.waitForCondition;

/**
 * A fenced broker's heartbeat that asks to be unfenced and reports a newly failed log dir is handled in one controller
 * event whose records are all computed from the image before the event (ReplicationControlManager
 * .processBrokerHeartbeat): handleBrokerUnfenced elects the broker leader of its leaderless partitions (the dir is
 * still registered, so LeaderAcceptor accepts it), and handleDirectoriesOffline, reading the same image, finds them
 * leaderless and writes no change. The broker is left leading partitions it holds offline, and nothing moves the
 * leader until the broker is fenced or restarted.
 */
@ClusterTestDefaults(types = {Type.KRAFT}, brokers = 1, disksPerBroker = 2)
public class UnfencingHeartbeatOfflineDirTest {

    @ClusterTest(serverProperties = {
        // the controller answers BrokerHeartbeat with CLUSTER_AUTHORIZATION_FAILED while the test holds it: the broker
        // keeps running and heartbeating (asking to stay unfenced), and its session expires
        @ClusterConfigProperty(id = 3000, key = "authorizer.class.name",
            value = "kafka.server.HoldRequestsAuthorizer")
    })
    public void testBrokerNotLeaderOfPartitionOnDirItsUnfencingHeartbeatReportsOffline(ClusterInstance cluster) throws Exception {
        try {
            KafkaBroker broker = cluster.brokers().get(0);
            TopicPartition tp = createPartitionOutsideMetadataLogDir(cluster, broker);
            String logDir = broker.replicaManager().localLogOrException(tp).parentDir();
            Uuid dirId = broker.logManager().directoryId(logDir).get();
            waitForCondition(() -> dirId.equals(controllerPartition(cluster, tp).directory(0)),
                () -> "the assignment of " + tp + " to " + logDir + " should be delivered");

            HoldRequestsAuthorizer.hold(ApiKeys.BROKER_HEARTBEAT);
            waitForCondition(() -> controllerPartition(cluster, tp).leader == -1,
                () -> "the controller should fence broker 0 when its session expires (no leader for " + tp + ")");
            File failedDir = causeLogDirFailure(broker, tp);
            HoldRequestsAuthorizer.release(ApiKeys.BROKER_HEARTBEAT);

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
            HoldRequestsAuthorizer.release(ApiKeys.BROKER_HEARTBEAT);
        }
    }
}
