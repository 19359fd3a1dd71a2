package kcp.corpus;

import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.consumer.internals.AbstractStickyAssignor.MemberData;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ConsumerProtocolAssignment;
import org.apache.kafka.common.message.ConsumerProtocolSubscription;
import org.apache.kafka.common.protocol.types.Schema;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Fills in {@code canonical}, {@code expect}, {@code lenient_expect} and {@code readers} of corpus vector
 * files from what Apache Kafka's Java client (kafka-clients on the classpath) does with the bytes in
 * {@code hex}.
 *
 * <p>Subscriptions and assignments: the 2-byte header is read with {@link ConsumerProtocol#deserializeVersion},
 * then the body with {@link ConsumerProtocol#deserializeConsumerProtocolSubscription(ByteBuffer, short)} /
 * {@link ConsumerProtocol#deserializeConsumerProtocolAssignment(ByteBuffer, short)} at layout min(v, N), i.e. the
 * generated raw classes over a {@code ByteBufferAccessor} with Java's own version check and underflow wrapping.
 * N = 3 gives {@code expect}; N = 0..3 gives {@code readers}. {@code canonical} re-encodes the decoded content
 * with {@link ConsumerProtocol#serializeSubscription(Subscription, short)} /
 * {@link ConsumerProtocol#serializeAssignment(Assignment, short)} at min(v, 3) and compares bytes.
 *
 * <p>Sticky userData: decoded with {@code StickyAssignor.memberData} (V1, then V0, then "unreadable");
 * cooperative-sticky userData with {@code CooperativeStickyAssignor.memberData}.
 *
 * <p>Usage: {@code java -cp ... kcp.corpus.CorpusReader [--check] <file-or-dir>...}; with {@code --check}
 * nothing is written: each file is recomputed and compared with what is committed, and the run fails if any
 * differs.
 */
public final class CorpusReader {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    private static final HexFormat HEX = HexFormat.of();

    private CorpusReader() { }

    public static void main(String[] args) throws Exception {
        boolean check = args.length > 0 && args[0].equals("--check");
        if (args.length == (check ? 1 : 0)) {
            System.err.println("usage: CorpusReader [--check] <vector-file-or-dir>...");
            System.exit(2);
        }
        List<Path> files = new ArrayList<>();
        for (String a : Arrays.asList(args).subList(check ? 1 : 0, args.length)) {
            try (Stream<Path> s = Files.walk(Path.of(a))) {
                s.filter(p -> p.toString().endsWith(".json")).sorted().forEach(files::add);
            }
        }
        String kafka = "kafka-clients " + org.apache.kafka.common.utils.AppInfoParser.getVersion();
        if (!check) {
            for (Path p : files) {
                Files.writeString(p, render(p));
            }
            System.out.println("java-reader (" + kafka + "): filled " + files.size() + " vector files");
            return;
        }
        int passed = 0;
        int failed = 0;
        for (Path p : files) {
            if (render(p).equals(Files.readString(p))) {
                passed++;
            } else {
                failed++;
                System.out.println("MISMATCH " + p + ": committed canonical/expect/readers differ from " + kafka);
            }
        }
        System.out.println("java-reader check (" + kafka + "): " + passed + " passed, " + failed + " failed");
        System.exit(failed == 0 && passed > 0 ? 0 : 1);
    }

    /** The file's content as it should be: its producer fields plus what Java makes of its bytes. */
    static String render(Path path) throws IOException {
        ObjectNode in = (ObjectNode) MAPPER.readTree(path.toFile());
        String kind = in.path("kind").asText();
        byte[] bytes = HEX.parseHex(in.path("hex").asText());
        ObjectNode out = F.objectNode();
        for (String k : new String[] {"name", "description", "producer", "kind", "hex"}) {
            if (!in.has(k)) {
                throw new IllegalArgumentException(path + ": missing " + k);
            }
            out.set(k, in.get(k));
        }
        switch (kind) {
            case "subscription":
            case "assignment":
                fillProtocol(out, kind.equals("subscription"), bytes);
                break;
            case "sticky_user_data":
                fillSticky(out, bytes);
                break;
            case "cooperative_sticky_user_data":
                fillCooperative(out, bytes);
                break;
            default:
                throw new IllegalArgumentException(path + ": unknown kind " + kind);
        }
        if (in.has("notes")) {
            out.set("notes", in.get("notes"));
        }
        DefaultPrettyPrinter pp = new DefaultPrettyPrinter()
            .withObjectIndenter(new DefaultIndenter("  ", "\n"))
            .withSeparators(Separators.createDefaultInstance()
                .withObjectFieldValueSpacing(Separators.Spacing.AFTER));
        return MAPPER.writer(pp).writeValueAsString(out) + "\n";
    }

    // ---------------------------------------------------------------- subscription / assignment

    /** Result of one read: either decoded JSON or an error string. */
    record Read(ObjectNode decoded, String error, Object raw, short version) { }

    static String err(Throwable t) {
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }

    /** Reads like a Java client that knows layouts up to {@code maxLayout}. */
    static Read read(boolean subscription, byte[] bytes, int maxLayout) {
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        short version;
        try {
            version = ConsumerProtocol.deserializeVersion(buf);
        } catch (RuntimeException e) {
            return new Read(null, err(e), null, (short) 0);
        }
        short layout = (short) Math.min(version, maxLayout);
        try {
            ObjectNode d = F.objectNode();
            d.put("version", version);
            Object raw;
            if (subscription) {
                ConsumerProtocolSubscription s = ConsumerProtocol.deserializeConsumerProtocolSubscription(buf, layout);
                raw = s;
                d.put("read_as_version", layout);
                ArrayNode topics = d.putArray("topics");
                s.topics().forEach(topics::add);
                putBytes(d, "user_data", s.userData());
                ArrayNode owned = d.putArray("owned_partitions");
                for (ConsumerProtocolSubscription.TopicPartition tp : s.ownedPartitions()) {
                    owned.add(topicPartitions(tp.topic(), tp.partitions()));
                }
                d.put("generation_id", s.generationId());
                if (s.rackId() == null) {
                    d.putNull("rack_id");
                } else {
                    d.put("rack_id", s.rackId());
                }
            } else {
                ConsumerProtocolAssignment a = ConsumerProtocol.deserializeConsumerProtocolAssignment(buf, layout);
                raw = a;
                d.put("read_as_version", layout);
                ArrayNode assigned = d.putArray("assigned_partitions");
                for (ConsumerProtocolAssignment.TopicPartition tp : a.assignedPartitions()) {
                    assigned.add(topicPartitions(tp.topic(), tp.partitions()));
                }
                putBytes(d, "user_data", a.userData());
            }
            d.put("trailing_bytes", buf.remaining());
            return new Read(d, null, raw, version);
        } catch (RuntimeException e) {
            return new Read(null, err(e), null, version);
        }
    }

    static ObjectNode topicPartitions(String topic, List<Integer> partitions) {
        ObjectNode o = F.objectNode();
        o.put("topic", topic);
        ArrayNode ps = o.putArray("partitions");
        partitions.forEach(ps::add);
        return o;
    }

    static void putBytes(ObjectNode d, String field, ByteBuffer b) {
        if (b == null) {
            d.putNull(field);
        } else {
            ByteBuffer dup = b.duplicate();
            byte[] arr = new byte[dup.remaining()];
            dup.get(arr);
            d.put(field, HEX.formatHex(arr));
        }
    }

    static boolean canonical(boolean subscription, byte[] bytes, Read r) {
        if (r.decoded == null) {
            return false;
        }
        short v = (short) Math.min(r.version, 3);
        ByteBuffer encoded;
        if (subscription) {
            ConsumerProtocolSubscription s = (ConsumerProtocolSubscription) r.raw;
            List<TopicPartition> owned = new ArrayList<>();
            for (ConsumerProtocolSubscription.TopicPartition tp : s.ownedPartitions()) {
                for (int p : tp.partitions()) {
                    owned.add(new TopicPartition(tp.topic(), p));
                }
            }
            Subscription sub = new Subscription(new ArrayList<>(s.topics()),
                s.userData() == null ? null : s.userData().duplicate(), owned, s.generationId(),
                Optional.ofNullable(s.rackId()));
            encoded = ConsumerProtocol.serializeSubscription(sub, v);
        } else {
            ConsumerProtocolAssignment a = (ConsumerProtocolAssignment) r.raw;
            List<TopicPartition> parts = new ArrayList<>();
            for (ConsumerProtocolAssignment.TopicPartition tp : a.assignedPartitions()) {
                for (int p : tp.partitions()) {
                    parts.add(new TopicPartition(tp.topic(), p));
                }
            }
            encoded = ConsumerProtocol.serializeAssignment(
                new Assignment(parts, a.userData() == null ? null : a.userData().duplicate()), v);
        }
        byte[] out = new byte[encoded.remaining()];
        encoded.get(out);
        return Arrays.equals(out, bytes);
    }

    static void fillProtocol(ObjectNode out, boolean subscription, byte[] bytes) {
        Read expect = read(subscription, bytes, 3);
        out.put("canonical", canonical(subscription, bytes, expect));
        if (expect.decoded != null) {
            out.set("expect", expect.decoded);
        } else {
            ObjectNode e = F.objectNode();
            e.put("error", expect.error);
            out.set("expect", e);
            // Lenient repair: the highest lower layout that parses (e.g. a "v1" without owned partitions
            // read as its v0 prefix). The version field keeps the wire version.
            if (bytes.length >= 2 && expect.version >= 0) {
                for (int layout = Math.min(expect.version, 3) - 1; layout >= 0; layout--) {
                    Read lenient = read(subscription, bytes, layout);
                    if (lenient.decoded != null) {
                        out.set("lenient_expect", lenient.decoded);
                        break;
                    }
                }
            }
        }
        ArrayNode readers = out.putArray("readers");
        for (int n = 0; n <= 3; n++) {
            Read r = read(subscription, bytes, n);
            ObjectNode o = readers.addObject();
            o.put("reader_version", n);
            o.put("ok", r.decoded != null);
            if (r.decoded != null) {
                o.set("decoded", r.decoded);
            } else {
                o.put("java_error", r.error);
            }
        }
    }

    // ---------------------------------------------------------------- assignor userData

    static Object reflectStatic(Class<?> c, String field) {
        try {
            Field f = c.getDeclaredField(field);
            f.setAccessible(true);
            return f.get(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    static Object invoke(Class<?> c, Object target, String method, Class<?>[] types, Object... args) {
        try {
            Method m = c.getDeclaredMethod(method, types);
            m.setAccessible(true);
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw new IllegalStateException(e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    static boolean schemaReads(Schema schema, byte[] bytes) {
        try {
            schema.read(ByteBuffer.wrap(bytes));
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    static void fillSticky(ObjectNode out, byte[] bytes) {
        Schema v1 = (Schema) reflectStatic(StickyAssignor.class, "STICKY_ASSIGNOR_USER_DATA_V1");
        Schema v0 = (Schema) reflectStatic(StickyAssignor.class, "STICKY_ASSIGNOR_USER_DATA_V0");
        // Same order as StickyAssignor.deserializeTopicPartitionAssignment: V1, then V0, then give up.
        String format = schemaReads(v1, bytes) ? "v1" : schemaReads(v0, bytes) ? "v0" : "unreadable";
        MemberData md = (MemberData) invoke(StickyAssignor.class, new StickyAssignor(), "memberData",
            new Class<?>[] {Subscription.class}, new Subscription(List.of(), ByteBuffer.wrap(bytes)));
        ObjectNode e = F.objectNode();
        e.put("format", format);
        ArrayNode prev = e.putArray("previous_assignment");
        String topic = null;
        ArrayNode ps = null;
        for (TopicPartition tp : md.partitions) {
            if (!tp.topic().equals(topic)) {
                ObjectNode o = prev.addObject();
                topic = tp.topic();
                o.put("topic", topic);
                ps = o.putArray("partitions");
            }
            ps.add(tp.partition());
        }
        if (md.generation.isPresent()) {
            e.put("generation", md.generation.get());
        } else {
            e.putNull("generation");
        }
        boolean canonical = false;
        if (format.equals("v1")) {
            ByteBuffer enc = (ByteBuffer) invoke(StickyAssignor.class, null, "serializeTopicPartitionAssignment",
                new Class<?>[] {MemberData.class}, md);
            byte[] arr = new byte[enc.remaining()];
            enc.get(arr);
            canonical = Arrays.equals(arr, bytes);
        }
        out.put("canonical", canonical);
        out.set("expect", e);
        out.putArray("readers");
    }

    static void fillCooperative(ObjectNode out, byte[] bytes) {
        MemberData md = (MemberData) invoke(CooperativeStickyAssignor.class, new CooperativeStickyAssignor(),
            "memberData", new Class<?>[] {Subscription.class}, new Subscription(List.of(), ByteBuffer.wrap(bytes)));
        ObjectNode e = F.objectNode();
        if (md.generation.isPresent()) {
            e.put("generation", md.generation.get());
        } else {
            e.putNull("generation");
        }
        boolean canonical = md.generation.isPresent() && bytes.length == 4
            && ByteBuffer.wrap(bytes).getInt() == md.generation.get();
        out.put("canonical", canonical);
        out.set("expect", e);
        out.putArray("readers");
    }
}
