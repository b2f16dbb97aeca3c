package jbodcheck;

import java.io.BufferedReader;
import java.io.File;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.metadata.MetadataJsonConverters;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.server.common.ApiMessageAndVersion;

/**
 * jbodcheck's probe (docs/realkafka.md, "The probe"): one JVM per cluster that answers JSON lines on stdin with
 * JSON lines on stdout, through Kafka's own Admin, producer and consumer, and reads log segments from disk with
 * Kafka's own record classes (the metadata log decoded by Kafka's MetadataRecordSerde, as DumpLogSegments'
 * --cluster-metadata-decoder does). One source compiles against every release from 3.7.0: what moved between
 * releases (the record classes' package, TopicPartitionInfo's ELR fields) is reached by reflection.
 *
 * Request: {"id": N, "op": NAME, ...}. Answer: {"id": N, "ok": true, "result": ...} or
 * {"id": N, "ok": false, "error": "ExceptionClass: message"}.
 */
public final class Probe {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] CONTROL_TYPES = {"ABORT", "COMMIT", "LEADER_CHANGE", "SNAPSHOT_HEADER",
        "SNAPSHOT_FOOTER", "KRAFT_VERSION", "KRAFT_VOTERS"};

    private final String bootstrap;
    private final Admin admin;
    private KafkaProducer<byte[], byte[]> producer;
    private long deliveryTimeoutMs;
    // sends whose acknowledgement the caller collects later (produceAsync, produceResult), by ticket
    private final Map<Long, Future<RecordMetadata>> sending = new HashMap<>();
    private long nextTicket;
    private KafkaConsumer<byte[], byte[]> consumer;
    private final Class<?> memoryRecords;
    private final Class<?> recordBatch;
    private final Class<?> record;

    private Probe(String bootstrap) throws ClassNotFoundException {
        this.bootstrap = bootstrap;
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(AdminClientConfig.CLIENT_ID_CONFIG, "jbodcheck-probe-admin");
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        admin = Admin.create(p);
        String pkg = "org.apache.kafka.common.record";
        Class<?> mr;
        try {
            mr = Class.forName(pkg + ".MemoryRecords");
        } catch (ClassNotFoundException e) {
            pkg = "org.apache.kafka.common.record.internal";      // 4.4 moved the record internals
            mr = Class.forName(pkg + ".MemoryRecords");
        }
        memoryRecords = mr;
        recordBatch = Class.forName(pkg + ".RecordBatch");
        record = Class.forName(pkg + ".Record");
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new FileOutputStream(java.io.FileDescriptor.out), true, "UTF-8");
        System.setOut(System.err);                                 // nothing but answers on the real stdout
        Probe probe = new Probe(args[0]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        out.println("{\"ready\": true}");
        String line;
        while ((line = in.readLine()) != null) {
            if (line.trim().isEmpty()) continue;
            JsonNode req = JSON.readTree(line);
            ObjectNode answer = JSON.createObjectNode();
            answer.set("id", req.get("id"));
            String op = req.path("op").asText();
            if (op.equals("quit")) break;
            try {
                answer.set("result", probe.handle(op, req));
                answer.put("ok", true);
            } catch (Throwable t) {
                Throwable c = unwrap(t);
                answer.put("ok", false);
                Throwable root = c;
                while (root.getCause() != null && root.getCause() != root) root = root.getCause();
                String error = c.getClass().getSimpleName() + ": " + String.valueOf(c.getMessage()).split("\n")[0];
                if (root != c) error += " (" + root.getClass().getSimpleName() + ": "
                    + String.valueOf(root.getMessage()).split("\n")[0] + ")";
                answer.put("error", error);
            }
            out.println(JSON.writeValueAsString(answer));
        }
        probe.close();
    }

    private static Throwable unwrap(Throwable t) {
        while ((t instanceof ExecutionException || t instanceof InvocationTargetException) && t.getCause() != null)
            t = t.getCause();
        return t;
    }

    private void close() {
        if (producer != null) producer.close(Duration.ofSeconds(5));
        if (consumer != null) consumer.close(Duration.ofSeconds(5));
        admin.close(Duration.ofSeconds(5));
    }

    private static long timeout(JsonNode req, long dflt) {
        return req.path("timeout_ms").asLong(dflt);
    }

    private JsonNode handle(String op, JsonNode req) throws Exception {
        long t = timeout(req, 30000);
        switch (op) {
            case "describeCluster": return describeCluster(t);
            case "describeTopics": return describeTopics(strings(req.get("topics")), t);
            case "describeLogDirs": return describeLogDirs(ints(req.get("brokers")), t);
            case "describeFeatures": return describeFeatures(t);
            case "upgradeMetadataVersion": return upgradeMetadataVersion(t);
            case "createTopic": return createTopic(req, t);
            case "deleteTopic": return deleteTopic(req, t);
            case "reassign": return reassign(req, t);
            case "listReassignments": return listReassignments(t);
            case "alterReplicaLogDir": return alterReplicaLogDir(req, t);
            case "electLeaders": return electLeaders(req, t);
            case "produce": return produce(req, t);
            case "produceAsync": return produceAsync(req);
            case "produceResult": return produceResult(req);
            case "consume": return consume(req, t);
            case "readLog": return readLog(new File(req.get("path").asText()), false);
            case "readMetadata": return readLog(new File(req.get("path").asText()), true);
            case "readLogs": return readLogs(req.get("paths"));
            default: throw new IllegalArgumentException("unknown op " + op);
        }
    }

    private static List<String> strings(JsonNode a) {
        List<String> out = new ArrayList<>();
        if (a != null) for (JsonNode n : a) out.add(n.asText());
        return out;
    }

    private static List<Integer> ints(JsonNode a) {
        List<Integer> out = new ArrayList<>();
        if (a != null) for (JsonNode n : a) out.add(n.asInt());
        return out;
    }

    private static ArrayNode intArray(Collection<Integer> xs) {
        ArrayNode a = JSON.createArrayNode();
        for (Integer x : xs) a.add(x);
        return a;
    }

    private static ArrayNode nodeIds(List<Node> nodes) {
        ArrayNode a = JSON.createArrayNode();
        for (Node n : nodes) a.add(n.id());
        return a;
    }

    private JsonNode describeCluster(long t) throws Exception {
        DescribeClusterResult r = admin.describeCluster();
        ObjectNode o = JSON.createObjectNode();
        o.put("clusterId", r.clusterId().get(t, TimeUnit.MILLISECONDS));
        List<Integer> ids = new ArrayList<>();
        for (Node n : r.nodes().get(t, TimeUnit.MILLISECONDS)) ids.add(n.id());
        Collections.sort(ids);
        o.set("brokers", intArray(ids));
        return o;
    }

    private JsonNode describeFeatures(long t) throws Exception {
        ObjectNode o = JSON.createObjectNode();
        Map<String, ?> finalized = admin.describeFeatures().featureMetadata().get(t, TimeUnit.MILLISECONDS)
            .finalizedFeatures();
        for (Map.Entry<String, ?> e : finalized.entrySet()) {
            Object range = e.getValue();
            o.put(e.getKey(), ((Number) range.getClass().getMethod("maxVersionLevel").invoke(range)).intValue());
        }
        return o;
    }

    /** Admin updateFeatures: metadata.version up to the highest level every broker supports (the release's latest
     * production one); the levels before and after. */
    private JsonNode upgradeMetadataVersion(long t) throws Exception {
        org.apache.kafka.clients.admin.FeatureMetadata meta = admin.describeFeatures().featureMetadata()
            .get(t, TimeUnit.MILLISECONDS);
        short target = meta.supportedFeatures().get("metadata.version").maxVersion();
        Object finalized = meta.finalizedFeatures().get("metadata.version");
        int before = finalized == null ? -1
            : ((Number) finalized.getClass().getMethod("maxVersionLevel").invoke(finalized)).intValue();
        admin.updateFeatures(Collections.singletonMap("metadata.version",
                new FeatureUpdate(target, FeatureUpdate.UpgradeType.UPGRADE)), new UpdateFeaturesOptions())
            .all().get(t, TimeUnit.MILLISECONDS);
        ObjectNode o = JSON.createObjectNode();
        o.put("before", before);
        o.put("after", (int) target);
        return o;
    }

    /** TopicPartitionInfo.elr() and lastKnownElr() exist only in the clients that have KIP-966's fields. */
    private static JsonNode optionalNodes(TopicPartitionInfo info, String method) {
        try {
            Method m = TopicPartitionInfo.class.getMethod(method);
            @SuppressWarnings("unchecked")
            List<Node> nodes = (List<Node>) m.invoke(info);
            return nodes == null ? JSON.nullNode() : nodeIds(nodes);
        } catch (NoSuchMethodException e) {
            return JSON.nullNode();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    private JsonNode describeTopics(List<String> topics, long t) throws Exception {
        ObjectNode o = JSON.createObjectNode();
        Map<String, TopicDescription> all = admin.describeTopics(topics).allTopicNames().get(t, TimeUnit.MILLISECONDS);
        for (Map.Entry<String, TopicDescription> e : all.entrySet()) {
            ObjectNode parts = o.putObject(e.getKey());
            for (TopicPartitionInfo p : e.getValue().partitions()) {
                ObjectNode po = parts.putObject(Integer.toString(p.partition()));
                Node leader = p.leader();
                if (leader == null || leader.isEmpty()) po.putNull("leader"); else po.put("leader", leader.id());
                po.set("replicas", nodeIds(p.replicas()));
                po.set("isr", nodeIds(p.isr()));
                po.set("elr", optionalNodes(p, "elr"));
                po.set("lastKnownElr", optionalNodes(p, "lastKnownElr"));
            }
        }
        return o;
    }

    private JsonNode describeLogDirs(List<Integer> brokers, long t) throws Exception {
        ObjectNode o = JSON.createObjectNode();
        Map<Integer, Map<String, LogDirDescription>> all = admin.describeLogDirs(brokers).allDescriptions()
            .get(t, TimeUnit.MILLISECONDS);
        for (Map.Entry<Integer, Map<String, LogDirDescription>> b : all.entrySet()) {
            ObjectNode bo = o.putObject(Integer.toString(b.getKey()));
            for (Map.Entry<String, LogDirDescription> d : b.getValue().entrySet()) {
                ObjectNode dobj = bo.putObject(d.getKey());
                LogDirDescription desc = d.getValue();
                if (desc.error() == null) dobj.putNull("error");
                else dobj.put("error", desc.error().getClass().getSimpleName());
                ArrayNode replicas = dobj.putArray("replicas");
                for (Map.Entry<TopicPartition, ReplicaInfo> r : desc.replicaInfos().entrySet()) {
                    ObjectNode ro = replicas.addObject();
                    ro.put("topic", r.getKey().topic());
                    ro.put("partition", r.getKey().partition());
                    ro.put("size", r.getValue().size());
                    ro.put("offsetLag", r.getValue().offsetLag());
                    ro.put("isFuture", r.getValue().isFuture());
                }
            }
        }
        return o;
    }

    private JsonNode createTopic(JsonNode req, long t) throws Exception {
        Map<Integer, List<Integer>> assignment = new HashMap<>();
        Iterator<Map.Entry<String, JsonNode>> it = req.get("assignment").fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            assignment.put(Integer.parseInt(e.getKey()), ints(e.getValue()));
        }
        NewTopic topic = new NewTopic(req.get("topic").asText(), assignment);
        Map<String, String> configs = new HashMap<>();
        Iterator<Map.Entry<String, JsonNode>> cs = req.path("configs").fields();
        while (cs.hasNext()) {
            Map.Entry<String, JsonNode> e = cs.next();
            configs.put(e.getKey(), e.getValue().asText());
        }
        topic.configs(configs);
        admin.createTopics(Collections.singleton(topic)).all().get(t, TimeUnit.MILLISECONDS);
        return JSON.nullNode();
    }

    private JsonNode deleteTopic(JsonNode req, long t) throws Exception {
        admin.deleteTopics(Collections.singleton(req.get("topic").asText())).all().get(t, TimeUnit.MILLISECONDS);
        return JSON.nullNode();
    }

    private static TopicPartition tp(JsonNode req) {
        return new TopicPartition(req.get("topic").asText(), req.get("partition").asInt());
    }

    private JsonNode reassign(JsonNode req, long t) throws Exception {
        Optional<NewPartitionReassignment> target = req.get("replicas").isNull() ? Optional.empty()
            : Optional.of(new NewPartitionReassignment(ints(req.get("replicas"))));
        admin.alterPartitionReassignments(Collections.singletonMap(tp(req), target)).all()
            .get(t, TimeUnit.MILLISECONDS);
        return JSON.nullNode();
    }

    private JsonNode listReassignments(long t) throws Exception {
        ObjectNode o = JSON.createObjectNode();
        for (Map.Entry<TopicPartition, PartitionReassignment> e : admin.listPartitionReassignments().reassignments()
                .get(t, TimeUnit.MILLISECONDS).entrySet()) {
            ObjectNode r = o.putObject(e.getKey().topic() + "-" + e.getKey().partition());
            r.set("replicas", intArray(e.getValue().replicas()));
            r.set("adding", intArray(e.getValue().addingReplicas()));
            r.set("removing", intArray(e.getValue().removingReplicas()));
        }
        return o;
    }

    private JsonNode alterReplicaLogDir(JsonNode req, long t) throws Exception {
        TopicPartitionReplica r = new TopicPartitionReplica(req.get("topic").asText(), req.get("partition").asInt(),
            req.get("broker").asInt());
        admin.alterReplicaLogDirs(Collections.singletonMap(r, req.get("path").asText())).all()
            .get(t, TimeUnit.MILLISECONDS);
        return JSON.nullNode();
    }

    private JsonNode electLeaders(JsonNode req, long t) throws Exception {
        ElectionType type = req.get("type").asText().equalsIgnoreCase("unclean") ? ElectionType.UNCLEAN
            : ElectionType.PREFERRED;
        TopicPartition p = tp(req);
        Map<TopicPartition, Optional<Throwable>> r = admin.electLeaders(type, Collections.singleton(p)).partitions()
            .get(t, TimeUnit.MILLISECONDS);
        Optional<Throwable> err = r.getOrDefault(p, Optional.empty());
        ObjectNode o = JSON.createObjectNode();
        if (err.isPresent()) o.put("error", err.get().getClass().getSimpleName() + ": " + err.get().getMessage());
        else o.putNull("error");
        return o;
    }

    /** A client's properties: the bootstrap, its client id, a 10 s request timeout, then key/value pairs. */
    private Properties clientProperties(String clientId, String... keyValues) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("client.id", clientId);
        p.put("request.timeout.ms", "10000");
        for (int i = 0; i + 1 < keyValues.length; i += 2) p.put(keyValues[i], keyValues[i + 1]);
        return p;
    }

    private KafkaProducer<byte[], byte[]> producer(JsonNode req) {
        if (producer == null) {
            // The delivery timeout is the first call's (one producer per probe): a send is acknowledged or has
            // failed within it, and the answer waits for that outcome, so no record lands after a reported failure.
            deliveryTimeoutMs = req.path("delivery_timeout_ms").asLong(20000);
            producer = new KafkaProducer<>(clientProperties("jbodcheck-probe-producer",
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.LINGER_MS_CONFIG, "0",
                ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Long.toString(deliveryTimeoutMs),
                // (Kafka requires delivery.timeout.ms >= linger.ms + request.timeout.ms)
                ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, Long.toString(Math.min(10000, deliveryTimeoutMs)),
                ProducerConfig.MAX_BLOCK_MS_CONFIG, "20000",
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, "org.apache.kafka.common.serialization.ByteArraySerializer",
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, "org.apache.kafka.common.serialization.ByteArraySerializer"));
        }
        return producer;
    }

    private Future<RecordMetadata> send(JsonNode req) {
        byte[] value = Base64.getDecoder().decode(req.get("value").asText());
        return producer(req).send(new ProducerRecord<>(req.get("topic").asText(), req.get("partition").asInt(),
            null, value));
    }

    private static JsonNode outcome(Future<RecordMetadata> f, long waitMs) throws Exception {
        ObjectNode o = JSON.createObjectNode();
        try {
            RecordMetadata m = f.get(waitMs, TimeUnit.MILLISECONDS);
            o.put("offset", m.offset());
            o.putNull("error");
        } catch (ExecutionException e) {
            Throwable c = unwrap(e);
            o.putNull("offset");
            o.put("error", c.getClass().getSimpleName() + ": " + c.getMessage());
        }
        return o;
    }

    private JsonNode produce(JsonNode req, long t) throws Exception {
        Future<RecordMetadata> f = send(req);
        return outcome(f, deliveryTimeoutMs + 20000);
    }

    /** Send one record and answer at once with its ticket: the caller collects the outcome with produceResult
     *  while the probe serves its other calls (an acknowledgement that awaits what the caller does next). */
    private JsonNode produceAsync(JsonNode req) {
        long ticket = ++nextTicket;
        sending.put(ticket, send(req));
        ObjectNode o = JSON.createObjectNode();
        o.put("ticket", ticket);
        return o;
    }

    /** The outcome of a ticket's send if it comes within wait_ms (as produce answers: offset, error), else
     *  {"done": false}; a ticket is answered with its outcome once. */
    private JsonNode produceResult(JsonNode req) throws Exception {
        long ticket = req.get("ticket").asLong();
        Future<RecordMetadata> f = sending.get(ticket);
        if (f == null) throw new IllegalArgumentException("no send with ticket " + ticket);
        try {
            ObjectNode o = (ObjectNode) outcome(f, req.path("wait_ms").asLong(200));
            sending.remove(ticket);
            o.put("done", true);
            return o;
        } catch (TimeoutException e) {
            ObjectNode o = JSON.createObjectNode();
            o.put("done", false);
            return o;
        }
    }

    private JsonNode consume(JsonNode req, long t) throws Exception {
        if (consumer == null) {
            consumer = new KafkaConsumer<>(clientProperties("jbodcheck-probe-consumer",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false",
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, req.path("isolation").asText("read_uncommitted"),
                ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000",
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, "org.apache.kafka.common.serialization.ByteArrayDeserializer",
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, "org.apache.kafka.common.serialization.ByteArrayDeserializer"));
        }
        TopicPartition p = tp(req);
        consumer.assign(Collections.singletonList(p));
        consumer.seekToBeginning(Collections.singletonList(p));
        long end = consumer.endOffsets(Collections.singletonList(p), Duration.ofMillis(t)).get(p);
        long start = consumer.position(p, Duration.ofMillis(t));
        ArrayNode records = JSON.createArrayNode();
        long deadline = System.currentTimeMillis() + t;
        while (consumer.position(p, Duration.ofMillis(t)) < end && System.currentTimeMillis() < deadline) {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500)).records(p)) {
                ObjectNode ro = records.addObject();
                ro.put("offset", r.offset());
                ro.put("value", r.value() == null ? null : Base64.getEncoder().encodeToString(r.value()));
            }
        }
        ObjectNode o = JSON.createObjectNode();
        o.put("start", start);
        o.put("end", end);
        o.put("complete", consumer.position(p, Duration.ofMillis(t)) >= end);
        o.set("records", records);
        consumer.unsubscribe();
        return o;
    }

    private Object call(Class<?> iface, Object target, String method) throws ReflectiveOperationException {
        return iface.getMethod(method).invoke(target);
    }

    /** readLog for each path: {path: records}. */
    private JsonNode readLogs(JsonNode paths) throws Exception {
        ObjectNode o = JSON.createObjectNode();
        for (JsonNode p : paths) o.set(p.asText(), readLog(new File(p.asText()), false));
        return o;
    }

    /** Every batch of every segment in a partition's log dir (read-only, also while the broker appends). */
    private JsonNode readLog(File dir, boolean metadata) throws Exception {
        File[] segments = dir.listFiles((d, name) -> name.endsWith(".log"));
        ArrayNode out = JSON.createArrayNode();
        if (segments == null) return out;
        Arrays.sort(segments);
        // A copy of each segment's bytes, never the file itself: FileRecords.close() trims the file to the size it
        // had when opened, which truncates a segment that Kafka appended to meanwhile.
        Method readable = memoryRecords.getMethod("readableRecords", ByteBuffer.class);
        for (File segment : segments) {
            Object records = readable.invoke(null, ByteBuffer.wrap(Files.readAllBytes(segment.toPath())));
            {
                Iterator<?> batches = ((Iterable<?>) memoryRecords.getMethod("batches").invoke(records)).iterator();
                while (true) {
                    Object batch;
                    try {
                        if (!batches.hasNext()) break;
                        batch = batches.next();
                    } catch (RuntimeException e) {
                        // the end of a segment being written (or zeros past the last batch after a crash): what
                        // Kafka's own recovery would truncate; the batches before it are complete
                        break;
                    }
                    boolean control = (Boolean) call(recordBatch, batch, "isControlBatch");
                    long baseOffset = (Long) call(recordBatch, batch, "baseOffset");
                    int epoch = (Integer) call(recordBatch, batch, "partitionLeaderEpoch");
                    Iterator<?> it = (Iterator<?>) call(recordBatch, batch, "iterator");
                    while (it.hasNext()) {
                        Object r = it.next();
                        ObjectNode ro = out.addObject();
                        ro.put("offset", (Long) call(record, r, "offset"));
                        ro.put("batchOffset", baseOffset);
                        ro.put("leaderEpoch", epoch);
                        ByteBuffer key = (ByteBuffer) call(record, r, "key");
                        ByteBuffer value = (ByteBuffer) call(record, r, "value");
                        if (control) {
                            short type = key != null && key.remaining() >= 4 ? key.getShort(key.position() + 2) : -1;
                            ro.put("type", type >= 0 && type < CONTROL_TYPES.length ? CONTROL_TYPES[type] : "CONTROL");
                            ro.put("control", true);
                        } else if (metadata) {
                            ApiMessageAndVersion mv = MetadataRecordSerde.INSTANCE.read(
                                new ByteBufferAccessor(value.duplicate()), value.remaining());
                            ApiMessage message = mv.message();
                            ro.put("type", message.getClass().getSimpleName());
                            ro.put("version", mv.version());
                            ro.set("data", MetadataJsonConverters.writeJson(message, mv.version()));
                        } else {
                            if (value == null) ro.putNull("value");
                            else {
                                byte[] b = new byte[value.remaining()];
                                value.duplicate().get(b);
                                ro.put("value", Base64.getEncoder().encodeToString(b));
                            }
                        }
                    }
                }
            }
        }
        return out;
    }
}
