/*
 * Finding 5 (docs/kraft.md) and the candidate fix unfence-without-offline-dirs (docs/fixes.md), run on Kafka's own
 * controller classes: ReplicationControlManager and ClusterControlManager of kafka-metadata, Kafka 3.9.2 as
 * released or with docs/fixes/unfence-without-offline-dirs-3.9.2.patch compiled in (docs/fixes/check-finding-5.sh
 * runs it both ways). Not a cluster: the controller's handlers are called as QuorumController calls them (records
 * generated against the state before the event, then replayed), the broker's requests are built by hand.
 *
 * The steps are the model's 12-step trace (scenarios/kraft-finding-5-unfenced-leader-on-failed-dir.json), one
 * broker with two log dirs and one partition with one replica:
 *   CreateTopic; the broker is fenced (handleBrokerFenced, as its session expires after its crash); it registers
 *   again with both dirs; its AssignReplicasToDirs puts the replica on dir 0; its next heartbeat asks to be
 *   unfenced and reports dir 0 offline (processBrokerHeartbeat).
 * It prints the partition's leader, Directories and the broker's registered dirs after the heartbeat, and exits 1
 * when the leader is the broker on the dir it reported offline (finding 5), 0 when the partition has no leader.
 */
package org.apache.kafka.controller;

import org.apache.kafka.common.DirectoryId;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.AssignReplicasToDirsRequestData;
import org.apache.kafka.common.message.BrokerHeartbeatRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableReplicaAssignment;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopic;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.metadata.BrokerRegistrationChangeRecord;
import org.apache.kafka.common.metadata.PartitionChangeRecord;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.RegisterBrokerRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.KafkaConfigSchema;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.metadata.placement.StripedReplicaPlacer;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.server.config.ConfigSynonym;
import org.apache.kafka.timeline.SnapshotRegistry;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.TimeUnit;

public class Finding5Check {
    static final int BROKER = 0;
    static final Uuid DIR0 = Uuid.fromString("suitdzfTTdqoWcy8VqmkUg");   // the model's dir 0
    static final Uuid DIR1 = Uuid.fromString("yh3acnzGSeurSTj8aIhOjw");   // the model's dir 1

    /** The two topic configs the controller's elections read (the broker's defaults). */
    static KafkaConfigSchema configSchema() {
        Map<ConfigResource.Type, ConfigDef> defs = new HashMap<>();
        Map<String, List<ConfigSynonym>> synonyms = new HashMap<>();
        for (ConfigResource.Type type : Arrays.asList(ConfigResource.Type.BROKER, ConfigResource.Type.TOPIC)) {
            defs.put(type, new ConfigDef()
                .define("unclean.leader.election.enable", ConfigDef.Type.BOOLEAN, "false", ConfigDef.Importance.HIGH, "")
                .define("min.insync.replicas", ConfigDef.Type.INT, "1", ConfigDef.Importance.HIGH, ""));
        }
        for (String name : Arrays.asList("unclean.leader.election.enable", "min.insync.replicas")) {
            synonyms.put(name, Collections.singletonList(new ConfigSynonym(name)));
        }
        return new KafkaConfigSchema(defs, synonyms);
    }

    final SnapshotRegistry snapshots = new SnapshotRegistry(new LogContext());
    final FeatureControlManager features;
    final ClusterControlManager cluster;
    final ReplicationControlManager replication;
    long offset = 0;   // the metadata log's next offset (the broker epoch of a registration is its offset)

    Finding5Check() {
        ConfigurationControlManager configs = new ConfigurationControlManager.Builder()
            .setSnapshotRegistry(snapshots).setKafkaConfigSchema(configSchema()).build();
        features = new FeatureControlManager.Builder().setSnapshotRegistry(snapshots)
            .setQuorumFeatures(new QuorumFeatures(0, QuorumFeatures.defaultFeatureMap(true),
                Collections.singletonList(0)))
            .setMetadataVersion(MetadataVersion.IBP_3_9_IV0).build();
        cluster = new ClusterControlManager.Builder().setTime(Time.SYSTEM).setSnapshotRegistry(snapshots)
            .setSessionTimeoutNs(TimeUnit.HOURS.toNanos(1)).setReplicaPlacer(new StripedReplicaPlacer(new Random(0)))
            .setFeatureControlManager(features).setBrokerUncleanShutdownHandler((id, records) -> { }).build();
        replication = new ReplicationControlManager.Builder().setSnapshotRegistry(snapshots)
            .setConfigurationControl(configs).setClusterControl(cluster).setFeatureControl(features)
            .setMaxElectionsPerImbalance(Integer.MAX_VALUE).build();
        cluster.activate();
    }

    /** QuorumController: an event's records, replayed after they were generated, at the log's next offset. */
    void replay(List<ApiMessageAndVersion> records) {
        for (ApiMessageAndVersion r : records) {
            Object m = r.message();
            if (m instanceof RegisterBrokerRecord) cluster.replay((RegisterBrokerRecord) m, offset);
            else if (m instanceof BrokerRegistrationChangeRecord) cluster.replay((BrokerRegistrationChangeRecord) m);
            else if (m instanceof TopicRecord) replication.replay((TopicRecord) m);
            else if (m instanceof PartitionRecord) replication.replay((PartitionRecord) m);
            else if (m instanceof PartitionChangeRecord) replication.replay((PartitionChangeRecord) m);
            else throw new IllegalStateException("unexpected record " + m);
            offset++;
        }
    }

    long register() {
        long epoch = offset;
        RegisterBrokerRecord record = new RegisterBrokerRecord().setBrokerId(BROKER).setBrokerEpoch(epoch)
            .setFenced(true).setLogDirs(Arrays.asList(DIR0, DIR1));
        record.endPoints().add(new RegisterBrokerRecord.BrokerEndpoint().setName("PLAINTEXT").setHost("localhost")
            .setPort(9092).setSecurityProtocol((short) 0));
        replay(Collections.singletonList(new ApiMessageAndVersion(record, (short) 3)));
        return epoch;
    }

    void heartbeat(long epoch, List<Uuid> offlineDirs) {
        BrokerHeartbeatRequestData request = new BrokerHeartbeatRequestData().setBrokerId(BROKER)
            .setBrokerEpoch(epoch).setCurrentMetadataOffset(offset).setWantFence(false).setWantShutDown(false)
            .setOfflineLogDirs(offlineDirs);
        replay(replication.processBrokerHeartbeat(request, epoch).records());
    }

    Uuid createTopic() {
        CreatableReplicaAssignment assignment = new CreatableReplicaAssignment().setPartitionIndex(0)
            .setBrokerIds(Collections.singletonList(BROKER));
        CreatableTopic topic = new CreatableTopic().setName("t").setNumPartitions(-1).setReplicationFactor((short) -1);
        topic.assignments().add(assignment);
        CreateTopicsRequestData request = new CreateTopicsRequestData();
        request.topics().add(topic);
        ControllerRequestContext context = new ControllerRequestContext(new RequestHeaderData(),
            KafkaPrincipal.ANONYMOUS, OptionalLong.empty());
        ControllerResult<CreateTopicsResponseData> result =
            replication.createTopics(context, request, Collections.singleton("t"));
        if (result.response().topics().find("t").errorCode() != 0) {
            throw new IllegalStateException("CreateTopics failed: " + result.response());
        }
        replay(result.records());
        return result.response().topics().find("t").topicId();
    }

    void assign(long epoch, Uuid topicId, Uuid dir) {
        AssignReplicasToDirsRequestData request = new AssignReplicasToDirsRequestData().setBrokerId(BROKER)
            .setBrokerEpoch(epoch);
        AssignReplicasToDirsRequestData.DirectoryData dirData = new AssignReplicasToDirsRequestData.DirectoryData()
            .setId(dir);
        AssignReplicasToDirsRequestData.TopicData topicData = new AssignReplicasToDirsRequestData.TopicData()
            .setTopicId(topicId);
        topicData.partitions().add(new AssignReplicasToDirsRequestData.PartitionData().setPartitionIndex(0));
        dirData.topics().add(topicData);
        request.directories().add(dirData);
        replay(replication.handleAssignReplicasToDirs(request).records());
    }

    /** A directory id by the model's name for it (dir 0, dir 1, or DirectoryId's reserved name). */
    static String name(Uuid dir) {
        if (dir.equals(DIR0)) return "dir 0";
        if (dir.equals(DIR1)) return "dir 1";
        if (dir.equals(DirectoryId.UNASSIGNED)) return "UNASSIGNED";
        if (dir.equals(DirectoryId.MIGRATING)) return "MIGRATING";
        if (dir.equals(DirectoryId.LOST)) return "LOST";
        return dir.toString();
    }

    String describe(Uuid topicId) {
        PartitionRegistration p = replication.getPartition(topicId, 0);
        List<String> dirs = new ArrayList<>();
        for (Uuid d : p.directories) dirs.add(name(d));
        List<String> registered = new ArrayList<>();
        for (Uuid d : cluster.registration(BROKER).directories()) registered.add(name(d));
        return "PartitionRegistration(leader " + p.leader + ", isr " + Arrays.toString(p.isr) + ", directories "
            + dirs + "); BrokerRegistration(broker " + BROKER + ", fenced " + cluster.registration(BROKER).fenced()
            + ", directories " + registered + ")";
    }

    public static void main(String[] args) {
        Finding5Check c = new Finding5Check();
        long epoch = c.register();
        c.heartbeat(epoch, Collections.emptyList());                 // unfenced
        Uuid topicId = c.createTopic();                              // 1. CreateTopic: Directories UNASSIGNED
        System.out.println("after CreateTopic: " + c.describe(topicId));
        List<ApiMessageAndVersion> fencing = new ArrayList<>();
        c.replication.handleBrokerFenced(BROKER, fencing);           // 2-3. crash, fenced by its session's timeout
        c.cluster.heartbeatManager().fence(BROKER);
        c.replay(fencing);
        System.out.println("after the fencing: " + c.describe(topicId));
        epoch = c.register();                                        // 4-5. restart, register both dirs
        c.assign(epoch, topicId, DIR0);                              // 6-9. log on dir 0 (then failed), assigned
        System.out.println("after AssignReplicasToDirs(dir 0): " + c.describe(topicId));
        c.heartbeat(epoch, Collections.singletonList(DIR0));         // 10. unfence + report dir 0 offline
        System.out.println("after the heartbeat (unfence, offline dir 0): " + c.describe(topicId));
        PartitionRegistration p = c.replication.getPartition(topicId, 0);
        boolean finding5 = p.leader == BROKER && !c.cluster.registration(BROKER).directories().contains(DIR0);
        System.out.println(finding5
            ? "finding 5: broker 0 leads the partition on dir 0, which it reported offline in the same heartbeat"
            : "no leader on the offline dir: the partition has leader " + p.leader);
        System.exit(finding5 ? 1 : 0);
    }
}
