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
import kafka.test.annotation.ClusterTest;
import kafka.test.annotation.ClusterTestDefaults;
import kafka.test.annotation.Type;
import kafka.test.junit.ClusterTestExtensions;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.DirectoryId;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.server.common.MetadataVersion;

import org.junit.jupiter.api.extension.ExtendWith;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static kafka.server.JbodTestUtils.controllerPartition;
import static kafka.server.JbodTestUtils.waitForCondition;

/**
 * A reassignment that adds a replica writes its directory as UNASSIGNED (PartitionChangeBuilder.setAssignmentChanges,
 * ClusterControlManager.defaultDir of a broker with several log dirs). The added broker creates the replica's log,
 * but queues no AssignReplicasToDirs for it: TopicDelta.localChanges asks the previous image for the broker's
 * directory, which throws for a broker that was not a replica, and the exception is swallowed, so the replica is
 * not listed with a directory and ReplicaManager.applyDelta reports none. The controller never learns the replica's
 * dir: when that dir fails, handleDirectoriesOffline finds nothing under it (the replica stays in the ISR, and a
 * leader there is never moved), and a restart with the dir failed re-creates the replica empty on another dir.
 */
@ExtendWith(ClusterTestExtensions.class)
@ClusterTestDefaults(types = {Type.KRAFT}, brokers = 2, disksPerBroker = 2)
public class ReassignedReplicaDirectoryTest {

    @ClusterTest(metadataVersion = MetadataVersion.IBP_3_9_IV0)
    public void testDirectoryOfReplicaAddedByReassignmentIsAssigned(ClusterInstance cluster) throws Exception {
        TopicPartition tp = new TopicPartition("foo", 0);
        try (Admin admin = cluster.createAdminClient()) {
            admin.createTopics(List.of(new NewTopic(tp.topic(), Map.of(tp.partition(), List.of(0))))).all().get();
        }
        KafkaBroker broker0 = cluster.brokers().get(0);
        waitForCondition(() -> broker0.logManager().getLog(tp, false).isDefined(), () -> "no log for " + tp + " on broker 0");
        Uuid dir0 = broker0.logManager().directoryId(broker0.logManager().getLog(tp, false).get().parentDir()).get();
        waitForCondition(() -> dir0.equals(controllerPartition(cluster, tp).directory(0)),
            () -> "the assignment of broker 0's replica of " + tp + " should be delivered");

        try (Admin admin = cluster.createAdminClient()) {
            admin.alterPartitionReassignments(
                Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(0, 1))))).all().get();
        }
        waitForCondition(() -> {
            PartitionRegistration partition = controllerPartition(cluster, tp);
            return Arrays.equals(partition.replicas, new int[] {0, 1}) && partition.addingReplicas.length == 0
                && partition.isr.length == 2;
        }, () -> "the reassignment of " + tp + " to [0, 1] should complete");

        KafkaBroker broker1 = cluster.brokers().get(1);
        waitForCondition(() -> broker1.logManager().getLog(tp, false).isDefined(), () -> "no log for " + tp + " on broker 1");
        String logDir = broker1.logManager().getLog(tp, false).get().parentDir();
        Uuid dir1 = broker1.logManager().directoryId(logDir).get();
        waitForCondition(() -> dir1.equals(controllerPartition(cluster, tp).directory(1)),
            () -> "the controller's directory for broker 1's replica of " + tp + " is "
                + name(controllerPartition(cluster, tp).directory(1)) + ", not " + dir1 + " (" + logDir
                + "), the log dir the replica is in");
    }

    private static String name(Uuid dir) {
        return DirectoryId.UNASSIGNED.equals(dir) ? "UNASSIGNED" : dir.toString();
    }
}
