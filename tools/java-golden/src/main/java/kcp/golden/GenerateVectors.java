package kcp.golden;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.consumer.internals.AbstractStickyAssignor.MemberData;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ConsumerProtocolAssignment;
import org.apache.kafka.common.message.ConsumerProtocolSubscription;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.types.Schema;
import org.apache.kafka.common.utils.AppInfoParser;

/**
 * Writes golden vectors for the consumer embedded protocol (ConsumerProtocolSubscription /
 * ConsumerProtocolAssignment and the sticky assignors' userData) using the kafka-clients jar on the classpath.
 *
 * <p>Usage: {@code java -cp ... kcp.golden.GenerateVectors <vectors-root>}; writes
 * {@code <vectors-root>/java-<kafka version>/<name>.json}, one file per payload, after removing the
 * {@code *.json} files already in that directory. The format is documented in testdata/vectors/README.md.
 */
public final class GenerateVectors {
    private static final int HIGHEST = 3;
    private static final String IMPL = "apache-kafka-java";

    private static String kafkaVersion;
    private static final Map<String, Map<String, Object>> VECTORS = new TreeMap<>();

    private GenerateVectors() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: GenerateVectors <vectors-root-dir>");
            System.exit(2);
        }
        kafkaVersion = AppInfoParser.getVersion();
        if (ConsumerProtocolSubscription.HIGHEST_SUPPORTED_VERSION != HIGHEST
                || ConsumerProtocolAssignment.HIGHEST_SUPPORTED_VERSION != HIGHEST) {
            throw new IllegalStateException("this generator assumes the consumer protocol's highest version is 3");
        }
        Path dir = Paths.get(args[0]).resolve("java-" + kafkaVersion);

        subscriptions();
        subscriptionsHandBuilt();
        subscriptionsMalformed();
        assignments();
        assignmentsHandBuilt();
        assignmentsMalformed();
        cooperativeStickyUserData();
        stickyUserData();

        SelfCheck.run(VECTORS);

        Files.createDirectories(dir);
        try (DirectoryStream<Path> old = Files.newDirectoryStream(dir, "*.json")) {
            for (Path p : old) {
                Files.delete(p);
            }
        }
        Map<String, Integer> perKind = new TreeMap<>();
        for (Map.Entry<String, Map<String, Object>> e : VECTORS.entrySet()) {
            Files.writeString(dir.resolve(e.getKey() + ".json"), Json.write(e.getValue()), StandardCharsets.UTF_8);
            perKind.merge((String) e.getValue().get("kind"), 1, Integer::sum);
        }
        System.out.println("java-" + kafkaVersion + ": " + VECTORS.size() + " vectors " + perKind + " -> " + dir);
    }

    // ------------------------------------------------------------------------------------------------ inputs

    static TopicPartition tp(String topic, int partition) {
        return new TopicPartition(topic, partition);
    }

    static ByteBuffer ud(String hex) {
        return ByteBuffer.wrap(Hex.decode(hex));
    }

    static byte[] serializeSubscription(int version, List<String> topics, ByteBuffer userData,
                                        List<TopicPartition> owned, int generation, Optional<String> rack) {
        Subscription s = new Subscription(topics, userData, owned, generation, rack);
        return Hex.bytes(ConsumerProtocol.serializeSubscription(s, (short) version));
    }

    static byte[] serializeAssignment(int version, List<TopicPartition> partitions, ByteBuffer userData) {
        return Hex.bytes(ConsumerProtocol.serializeAssignment(new Assignment(partitions, userData), (short) version));
    }

    static String describeSub(List<String> topics, ByteBuffer userData, List<TopicPartition> owned, int generation,
                              Optional<String> rack) {
        return "topics " + shortList(topics) + ", userData " + (userData == null ? "null" : "0x" + Hex.of(userData))
                + ", owned " + shortList(owned) + ", generation " + generation + ", rack "
                + rack.map(r -> "\"" + r + "\"").orElse("empty");
    }

    static String shortList(List<?> l) {
        if (l.size() > 6) {
            return "[" + l.size() + " entries: " + l.get(0) + ", " + l.get(1) + ", ..., " + l.get(l.size() - 1) + "]";
        }
        return l.toString();
    }

    static final String SUB_HOW = "ConsumerProtocol.serializeSubscription(new Subscription(topics, userData, "
            + "ownedPartitions, generationId, rackId), (short) %d)";
    static final String ASG_HOW = "ConsumerProtocol.serializeAssignment(new Assignment(partitions, userData), (short) %d)";
    static final String HAND_HOW = "hand-built bytes (not written by a Java encoder); expect/readers are Java's reader output";

    /** One subscription case written by Java's serializer at versions 0..3. */
    static void subAllVersions(String caseName, String what, List<String> topics, ByteBuffer userData,
                               List<TopicPartition> owned, int generation, Optional<String> rack, String notes) {
        for (int v = 0; v <= HIGHEST; v++) {
            byte[] bytes = serializeSubscription(v, topics, userData, owned, generation, rack);
            addPayload("subscription", "subscription-v" + v + "-" + caseName,
                    "v" + v + " subscription, " + what + " (input: " + describeSub(topics, userData, owned, generation, rack)
                            + "; fields newer than v" + v + " are dropped by the writer)",
                    String.format(SUB_HOW, v), bytes, notes, null);
        }
    }

    static void asgAllVersions(String caseName, String what, List<TopicPartition> partitions, ByteBuffer userData,
                               String notes) {
        for (int v = 0; v <= HIGHEST; v++) {
            byte[] bytes = serializeAssignment(v, partitions, userData);
            addPayload("assignment", "assignment-v" + v + "-" + caseName,
                    "v" + v + " assignment, " + what + " (input: partitions " + shortList(partitions) + ", userData "
                            + (userData == null ? "null" : "0x" + Hex.of(userData)) + ")",
                    String.format(ASG_HOW, v), bytes, notes, null);
        }
    }

    // ------------------------------------------------------------------------------------------- subscriptions

    static void subscriptions() {
        List<String> foo = List.of("foo");
        subAllVersions("basic", "the reference example of kafka-java-reference.md section 1.4",
                foo, null, List.of(tp("foo", 0)), 5, Optional.of("r1"), null);
        subAllVersions("userdata-null", "null userData (length -1)",
                foo, null, List.of(), -1, Optional.empty(), null);
        subAllVersions("userdata-empty", "empty (0-byte) userData, distinct from null on the wire",
                foo, ud(""), List.of(), -1, Optional.empty(), null);
        subAllVersions("userdata-bytes", "three bytes of userData (sarama's groupMemberMetadataV0 input)",
                List.of("one", "two"), ud("010203"), List.of(), -1, Optional.empty(), null);
        subAllVersions("no-topics", "no topics and no owned partitions",
                List.of(), ud(""), List.of(), -1, Optional.empty(), null);

        List<String> many = new ArrayList<>();
        for (int i = 299; i >= 0; i--) {
            many.add("t-" + i);
        }
        subAllVersions("many-topics", "300 topics t-0..t-299 given in reverse numeric order; Java sorts them as strings",
                many, null, List.of(), -1, Optional.empty(), null);

        // Code-point order: a, ete, nihon, U+E000, U+FF21, U+1F600. Java's String order is UTF-16 code units, so
        // the supplementary U+1F600 (surrogates D83D DE00) sorts before U+E000 and U+FF21.
        List<String> unicode = List.of("a", "\u00e9t\u00e9", "\u65e5\u672c", "\ue000", "\uff21", "\ud83d\ude00");
        subAllVersions("unicode-topics",
                "non-ASCII topics incl. a supplementary-plane character; Java sorts by UTF-16 code units "
                        + "(U+1F600 before U+E000 and U+FF21), not by code point",
                unicode, null, List.of(tp("\ud83d\ude00", 1), tp("\uff21", 0), tp("\ue000", 2)), 3, Optional.empty(),
                "topics given to the serializer in code-point order; owned partitions given in code-point order too");

        String long249 = longTopic();
        subAllVersions("topic-249-chars", "a 249-character topic name (Kafka's maximum topic length)",
                List.of(long249, "foo"), null, List.of(tp(long249, 7)), 1, Optional.empty(), null);

        subAllVersions("partition-extremes", "owned partitions 2147483647 and 0 (given in that order; Java sorts)",
                foo, null, List.of(tp("foo", Integer.MAX_VALUE), tp("foo", 0)), 1, Optional.empty(), null);

        List<String> ownedTopics = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            ownedTopics.add("o-" + i);
        }
        List<TopicPartition> ownedMany = new ArrayList<>();
        for (int p : new int[] {3, 1, 2, 0}) {
            for (int i = 39; i >= 0; i--) {
                ownedMany.add(tp("o-" + i, p));
            }
        }
        subAllVersions("owned-many-topics",
                "160 owned partitions over 40 topics given interleaved and unsorted; Java sorts by (topic, partition) and groups",
                ownedTopics, null, ownedMany, 7, Optional.empty(), null);

        subAllVersions("generation-minus1", "generation -1 (the 'no generation' default)",
                foo, null, List.of(tp("foo", 0)), -1, Optional.empty(), null);
        subAllVersions("generation-0", "generation 0",
                foo, null, List.of(tp("foo", 0)), 0, Optional.empty(), null);
        subAllVersions("generation-max", "generation 2147483647",
                foo, null, List.of(tp("foo", 0)), Integer.MAX_VALUE, Optional.empty(), null);

        subAllVersions("rack-null", "no rack (written as a null string at v3)",
                foo, null, List.of(), 1, Optional.empty(), null);
        subAllVersions("rack-empty", "rack \"\" (written as an empty string at v3, distinct from null)",
                foo, null, List.of(), 1, Optional.of(""), null);
        subAllVersions("rack-set", "rack \"rack-a\"",
                foo, null, List.of(), 1, Optional.of("rack-a"), null);

        subAllVersions("unsorted-input",
                "topics and owned partitions given unsorted; Java writes them sorted and grouped (canonical bytes)",
                List.of("foo", "bar", "baz"), null,
                List.of(tp("foo", 1), tp("bar", 2), tp("foo", 0), tp("bar", 1)), 4, Optional.of("r1"),
                "input order: topics [foo, bar, baz], owned [foo-1, bar-2, foo-0, bar-1]");

        // A full subscription as a cooperative-sticky member sends it after generation 10.
        CooperativeStickyAssignor coop = new CooperativeStickyAssignor();
        coop.onAssignment(new Assignment(List.of(tp("foo", 0), tp("foo", 1))),
                new ConsumerGroupMetadata("group", 10, "member-1", Optional.empty()));
        ByteBuffer coopUd = coop.subscriptionUserData(new HashSet<>(List.of("foo")));
        byte[] coopSub = serializeSubscription(3, List.of("foo"), coopUd, List.of(tp("foo", 0), tp("foo", 1)), 10,
                Optional.empty());
        addPayload("subscription", "subscription-v3-cooperative-sticky",
                "v3 subscription of a cooperative-sticky member after onAssignment(generation 10): userData is the "
                        + "int32 generation, owned [foo-0, foo-1], generation 10",
                "CooperativeStickyAssignor.onAssignment(...generation 10) then subscriptionUserData(...), then "
                        + String.format(SUB_HOW, 3), coopSub, null, null);
    }

    static String longTopic() {
        StringBuilder sb = new StringBuilder("topic-of-249-chars-");
        while (sb.length() < 249) {
            sb.append((char) ('a' + sb.length() % 26));
        }
        return sb.toString();
    }

    static void subscriptionsHandBuilt() {
        addPayload("subscription", "subscription-v0-wire-unsorted-topics",
                "v0 subscription whose topics are on the wire unsorted [foo, bar]; Java keeps wire order when reading",
                HAND_HOW, new W().i16(0).i32(2).str("foo").str("bar").i32(-1).done(),
                "a Java writer would have sorted them, so canonical is false", null);
        addPayload("subscription", "subscription-v0-wire-duplicate-topics",
                "v0 subscription listing topic foo twice; Java's reader keeps both",
                HAND_HOW, new W().i16(0).i32(2).str("foo").str("foo").i32(-1).done(), null, null);
        addPayload("subscription", "subscription-v1-wire-owned-ungrouped",
                "v1 subscription whose owned partitions are not grouped/sorted: foo:[1], bar:[0], foo:[0]; Java keeps wire order",
                HAND_HOW, new W().i16(1).i32(2).str("bar").str("foo").i32(-1)
                        .i32(3).str("foo").i32(1).i32(1).str("bar").i32(1).i32(0).str("foo").i32(1).i32(0).done(),
                null, null);
        addPayload("subscription", "subscription-v2-generation-minus5",
                "v2 subscription carrying generation -5; the raw reader keeps -5 (Subscription maps any negative to empty)",
                HAND_HOW, new W().i16(2).i32(1).str("foo").i32(-1).i32(0).i32(-5).done(),
                "Java's serializer can only write -1 for a negative generation, so canonical is false", null);
        addPayload("subscription", "subscription-v0-topic-invalid-utf8",
                "v0 subscription whose topic bytes ff fe 66 are not valid UTF-8; Java decodes with U+FFFD replacement",
                HAND_HOW, new W().i16(0).i32(1).i16(3).raw("fffe66").i32(-1).done(),
                "Java does not reject invalid UTF-8 in strings; a stricter decoder may reject this payload", null);
        addPayload("subscription", "subscription-v0-userdata-length-minus2",
                "v0 subscription whose userData length is -2; Java treats any negative length as null",
                HAND_HOW, new W().i16(0).i32(1).str("foo").i32(-2).done(), null, null);
        addPayload("subscription", "subscription-v3-rack-length-minus2",
                "v3 subscription whose rack length is -2; Java treats any negative length of a nullable string as null",
                HAND_HOW, new W().i16(3).i32(1).str("foo").i32(-1).i32(0).i32(-1).i16(-2).done(), null, null);
        addPayload("subscription", "subscription-v3-trailing-bytes",
                "v3 subscription followed by 3 garbage bytes; Java ignores trailing bytes",
                HAND_HOW, new W().raw(Hex.of(serializeSubscription(3, List.of("foo"), null, List.of(tp("foo", 0)), 5,
                        Optional.of("r1")))).raw("abcdef").done(), null, null);
        // Section 1.4: ConsumerProtocolTest.deserializeFutureSubscriptionVersion's payload.
        addPayload("subscription", "subscription-v100-future",
                "version 100 subscription (ConsumerProtocolTest's future-version payload): v3 fields plus an extra "
                        + "string field \"bar\"; Java parses it with the v3 layout and ignores the rest",
                HAND_HOW, Hex.decode("0064" + "00000001" + "0005746f706963" + "00000000"
                        + "00000001" + "0003626172" + "00000001" + "00000002" + "00000001"
                        + "00067261636b2d61" + "0003626172"), null, null);
        addPayload("subscription", "subscription-v4-appended-field",
                "version 4 subscription = v3 body (topics [foo], owned [foo-0], generation 5, rack r1) plus an appended "
                        + "int32 field 42; Java reads the v3 layout and leaves 4 trailing bytes",
                HAND_HOW, new W().i16(4).raw(Hex.of(serializeSubscription(3, List.of("foo"), null, List.of(tp("foo", 0)),
                        5, Optional.of("r1"))).substring(4)).i32(42).done(), null, null);
        addPayload("subscription", "subscription-v32767-future",
                "version 32767 (highest int16) subscription with a plain v3 body; Java clamps the layout to v3",
                HAND_HOW, new W().i16(32767).raw(Hex.of(serializeSubscription(3, List.of("foo"), null, List.of(), 1,
                        Optional.of("r1"))).substring(4)).done(), null, null);
    }

    static void subscriptionsMalformed() {
        String n = "subscription-malformed-";
        String t = "truncated/malformed subscription: ";
        bad("subscription", n + "empty", t + "zero bytes (no version header)", new byte[0], null);
        bad("subscription", n + "header-1-byte", t + "a single byte, half a version header", Hex.decode("00"), null);
        bad("subscription", n + "version-negative", t + "version -1 header followed by a valid v0 body",
                new W().i16(-1).i32(1).str("foo").i32(-1).done(), null);
        bad("subscription", n + "v0-truncated-topic-count", t + "v0 with only 2 bytes of the topic count",
                Hex.decode("00000000"), null);
        bad("subscription", n + "v0-truncated-topic-length", t + "v0 with one topic and 1 byte of its length",
                Hex.decode("00000000000100"), null);
        bad("subscription", n + "v0-topic-longer-than-remaining", t + "v0 topic length 10 but only 3 bytes follow",
                new W().i16(0).i32(1).i16(10).raw("666f6f").done(), null);
        bad("subscription", n + "v0-negative-topic-count", t + "v0 topic count -1 (null for a non-nullable array)",
                new W().i16(0).i32(-1).i32(-1).done(), null);
        bad("subscription", n + "v0-negative-topic-length", t + "v0 topic string length -1 (null for a non-nullable string)",
                new W().i16(0).i32(1).i16(-1).i32(-1).done(), null);
        bad("subscription", n + "v0-huge-topic-count", t + "v0 topic count 2147483647 with only a few bytes left",
                new W().i16(0).i32(Integer.MAX_VALUE).str("foo").i32(-1).done(), null);
        bad("subscription", n + "v0-missing-userdata", t + "v0 topics [foo] and nothing else",
                new W().i16(0).i32(1).str("foo").done(), null);
        bad("subscription", n + "v0-truncated-userdata-length", t + "v0 topics [foo] then 2 bytes of the userData length",
                new W().i16(0).i32(1).str("foo").i16(0).done(), null);
        bad("subscription", n + "v0-userdata-longer-than-remaining", t + "v0 userData length 10 but only 3 bytes follow",
                new W().i16(0).i32(1).str("foo").i32(10).raw("010203").done(), null);
        byte[] v1Bad = new W().i16(1).i32(1).str("foo").i32(-1).done();
        Map<String, Object> lenient = readSubscription(v1Bad, 0).decoded;
        bad("subscription", n + "v1-missing-owned-partitions",
                t + "v1 header but a v0 body (no owned-partitions array), as written by bsm/sarama-cluster and old kafka-go",
                v1Bad, "sarama reads this as its v0 prefix; lenient_expect is that reading (Java's reader 0 result)");
        VECTORS.get(n + "v1-missing-owned-partitions").put("lenient_expect", lenient);
        reorderLenient(n + "v1-missing-owned-partitions");
        bad("subscription", n + "v1-truncated-owned-count", t + "v1 with 3 of the 4 owned-partitions count bytes",
                new W().i16(1).i32(1).str("foo").i32(-1).raw("000000").done(), null);
        bad("subscription", n + "v1-truncated-owned-topic", t + "v1 owned count 1, topic length 3 but 1 byte follows",
                new W().i16(1).i32(1).str("foo").i32(-1).i32(1).i16(3).raw("66").done(), null);
        bad("subscription", n + "v1-truncated-partition-count", t + "v1 owned foo then 2 bytes of its partition count",
                new W().i16(1).i32(1).str("foo").i32(-1).i32(1).str("foo").i16(0).done(), null);
        bad("subscription", n + "v1-truncated-partition-list", t + "v1 owned foo with partition count 2 but one partition",
                new W().i16(1).i32(1).str("foo").i32(-1).i32(1).str("foo").i32(2).i32(0).done(), null);
        bad("subscription", n + "v1-negative-partition-count", t + "v1 owned foo with partition count -1",
                new W().i16(1).i32(1).str("foo").i32(-1).i32(1).str("foo").i32(-1).done(), null);
        bad("subscription", n + "v1-negative-owned-count", t + "v1 owned-partitions count -1",
                new W().i16(1).i32(1).str("foo").i32(-1).i32(-1).done(), null);
        bad("subscription", n + "v1-huge-owned-count", t + "v1 owned-partitions count 2147483647",
                new W().i16(1).i32(1).str("foo").i32(-1).i32(Integer.MAX_VALUE).str("foo").done(), null);
        bad("subscription", n + "v1-huge-partition-count", t + "v1 owned foo with partition count 1000000 and 2 partitions",
                new W().i16(1).i32(1).str("foo").i32(-1).i32(1).str("foo").i32(1_000_000).i32(0).i32(1).done(), null);
        bad("subscription", n + "v2-missing-generation", t + "v2 header over a v1 body (no generation)",
                new W().i16(2).i32(1).str("foo").i32(-1).i32(0).done(), null);
        bad("subscription", n + "v2-truncated-generation", t + "v2 with 2 of the 4 generation bytes",
                new W().i16(2).i32(1).str("foo").i32(-1).i32(0).i16(0).done(), null);
        bad("subscription", n + "v3-missing-rack", t + "v3 header over a v2 body (no rack)",
                new W().i16(3).i32(1).str("foo").i32(-1).i32(0).i32(1).done(), null);
        bad("subscription", n + "v3-truncated-rack-length", t + "v3 with 1 byte of the rack length",
                new W().i16(3).i32(1).str("foo").i32(-1).i32(0).i32(1).raw("00").done(), null);
        bad("subscription", n + "v3-rack-longer-than-remaining", t + "v3 rack length 5 but only 2 bytes follow",
                new W().i16(3).i32(1).str("foo").i32(-1).i32(0).i32(1).i16(5).raw("7231").done(), null);
    }

    /** Keep lenient_expect right after expect for readability. */
    static void reorderLenient(String name) {
        Map<String, Object> v = VECTORS.get(name);
        Map<String, Object> out = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : v.entrySet()) {
            if (e.getKey().equals("lenient_expect")) {
                continue;
            }
            out.put(e.getKey(), e.getValue());
            if (e.getKey().equals("expect")) {
                out.put("lenient_expect", v.get("lenient_expect"));
            }
        }
        VECTORS.put(name, out);
    }

    // --------------------------------------------------------------------------------------------- assignments

    static void assignments() {
        asgAllVersions("basic", "the reference example of kafka-java-reference.md section 1.4",
                List.of(tp("foo", 0), tp("foo", 2)), null, null);
        asgAllVersions("userdata-null", "null userData", List.of(tp("foo", 0)), null, null);
        asgAllVersions("userdata-empty", "empty (0-byte) userData", List.of(tp("foo", 0)), ud(""), null);
        asgAllVersions("userdata-bytes", "userData 010203 (sarama's groupMemberAssignmentV0 input)",
                List.of(tp("one", 0), tp("one", 2), tp("one", 4)), ud("010203"), null);
        asgAllVersions("no-partitions", "an empty assignment", List.of(), null, null);
        asgAllVersions("partition-extremes", "partitions 2147483647 then 0 (order kept: Java does not sort assignments)",
                List.of(tp("foo", Integer.MAX_VALUE), tp("foo", 0)), null, null);
        List<TopicPartition> many = new ArrayList<>();
        for (int i = 299; i >= 0; i--) {
            many.add(tp("t-" + i, i % 7));
        }
        asgAllVersions("many-topics", "300 topics t-299..t-0 with one partition each, in first-appearance order",
                many, null, null);
        asgAllVersions("unicode-topics", "non-ASCII topics incl. a supplementary-plane character, order kept",
                List.of(tp("\uff21", 0), tp("\ud83d\ude00", 1), tp("\u00e9t\u00e9", 2), tp("\ue000", 3)), null, null);
        asgAllVersions("topic-249-chars", "a 249-character topic name",
                List.of(tp(longTopic(), 0), tp(longTopic(), 1)), null, null);
        asgAllVersions("first-appearance-order",
                "partitions given as [foo-2, bar-0, foo-0, baz-1, bar-5]; Java groups by topic in first-appearance "
                        + "order and keeps partition order: foo:[2,0], bar:[0,5], baz:[1]",
                List.of(tp("foo", 2), tp("bar", 0), tp("foo", 0), tp("baz", 1), tp("bar", 5)), null, null);
    }

    static void assignmentsHandBuilt() {
        addPayload("assignment", "assignment-v0-wire-split-topic-groups",
                "v0 assignment listing foo twice: foo:[0], bar:[0], foo:[1]; Java's reader keeps the three entries",
                HAND_HOW, new W().i16(0).i32(3).str("foo").i32(1).i32(0).str("bar").i32(1).i32(0)
                        .str("foo").i32(1).i32(1).i32(-1).done(),
                "Java's writer would group foo's partitions, so canonical is false", null);
        addPayload("assignment", "assignment-v0-duplicate-partition",
                "v0 assignment foo:[1, 1] (duplicate partition); Java neither rejects nor deduplicates it",
                HAND_HOW, new W().i16(0).i32(1).str("foo").i32(2).i32(1).i32(1).i32(-1).done(), null, null);
        addPayload("assignment", "assignment-v0-negative-partition-id",
                "v0 assignment foo:[-1]; partition ids are not validated by the reader",
                HAND_HOW, new W().i16(0).i32(1).str("foo").i32(1).i32(-1).i32(-1).done(), null, null);
        addPayload("assignment", "assignment-v0-userdata-length-minus2",
                "v0 assignment whose userData length is -2; Java treats any negative length as null",
                HAND_HOW, new W().i16(0).i32(1).str("foo").i32(1).i32(0).i32(-2).done(), null, null);
        addPayload("assignment", "assignment-v3-trailing-bytes",
                "v3 assignment followed by 3 garbage bytes; Java ignores trailing bytes",
                HAND_HOW, new W().raw(Hex.of(serializeAssignment(3, List.of(tp("foo", 0)), null))).raw("abcdef").done(),
                null, null);
        addPayload("assignment", "assignment-v100-future",
                "version 100 assignment (ConsumerProtocolTest's future-version payload): partitions [foo-1], empty "
                        + "userData, plus an extra string field \"bar\" that Java ignores",
                HAND_HOW, Hex.decode("0064" + "00000001" + "0003666f6f" + "00000001" + "00000001" + "00000000"
                        + "0003626172"), null, null);
        addPayload("assignment", "assignment-v4-appended-field",
                "version 4 assignment = v3 body (foo:[0,2], userData null) plus an appended int32 field 42; Java "
                        + "reads the v3 layout and leaves 4 trailing bytes",
                HAND_HOW, new W().i16(4).raw(Hex.of(serializeAssignment(3, List.of(tp("foo", 0), tp("foo", 2)), null))
                        .substring(4)).i32(42).done(), null, null);
    }

    static void assignmentsMalformed() {
        String n = "assignment-malformed-";
        String t = "truncated/malformed assignment: ";
        bad("assignment", n + "empty", t + "zero bytes (no version header)", new byte[0],
                "ConsumerCoordinator.onJoinComplete rejects < 2 bytes earlier with IllegalStateException "
                        + "(\"There are insufficient bytes available to read assignment ...\"); expect records ConsumerProtocol's outcome");
        bad("assignment", n + "header-1-byte", t + "a single byte", Hex.decode("00"), null);
        bad("assignment", n + "version-negative", t + "version -1 header followed by a valid v0 body",
                new W().i16(-1).i32(0).i32(-1).done(), null);
        bad("assignment", n + "v0-truncated-topic-count", t + "v0 with 3 bytes of the topic count",
                Hex.decode("0000000000"), null);
        bad("assignment", n + "v0-truncated-topic-length", t + "v0 topic count 1 then 1 byte of the topic length",
                new W().i16(0).i32(1).raw("00").done(), null);
        bad("assignment", n + "v0-topic-longer-than-remaining", t + "v0 topic length 10 but only 3 bytes follow",
                new W().i16(0).i32(1).i16(10).raw("666f6f").done(), null);
        bad("assignment", n + "v0-negative-topic-count", t + "v0 topic count -1",
                new W().i16(0).i32(-1).i32(-1).done(), null);
        bad("assignment", n + "v0-negative-topic-length", t + "v0 topic string length -1",
                new W().i16(0).i32(1).i16(-1).i32(0).i32(-1).done(), null);
        bad("assignment", n + "v0-huge-topic-count", t + "v0 topic count 2147483647",
                new W().i16(0).i32(Integer.MAX_VALUE).str("foo").i32(0).i32(-1).done(), null);
        bad("assignment", n + "v0-truncated-partition-count", t + "v0 foo then 2 bytes of its partition count",
                new W().i16(0).i32(1).str("foo").i16(0).done(), null);
        bad("assignment", n + "v0-truncated-partition-id", t + "v0 foo partition count 2 with one partition",
                new W().i16(0).i32(1).str("foo").i32(2).i32(0).done(), null);
        bad("assignment", n + "v0-negative-partition-count", t + "v0 foo partition count -1",
                new W().i16(0).i32(1).str("foo").i32(-1).i32(-1).done(), null);
        bad("assignment", n + "v0-huge-partition-count", t + "v0 foo partition count 2147483647",
                new W().i16(0).i32(1).str("foo").i32(Integer.MAX_VALUE).i32(0).i32(-1).done(), null);
        bad("assignment", n + "v0-missing-userdata", t + "v0 foo:[0] and no userData field",
                new W().i16(0).i32(1).str("foo").i32(1).i32(0).done(), null);
        bad("assignment", n + "v0-truncated-userdata-length", t + "v0 foo:[0] and 2 bytes of the userData length",
                new W().i16(0).i32(1).str("foo").i32(1).i32(0).i16(0).done(), null);
        bad("assignment", n + "v0-userdata-longer-than-remaining", t + "v0 userData length 10 but only 3 bytes follow",
                new W().i16(0).i32(1).str("foo").i32(1).i32(0).i32(10).raw("010203").done(), null);
    }

    // ------------------------------------------------------------------------------------ assignor userData

    /** Exposes CooperativeStickyAssignor's protected memberData(). */
    static final class CoopProbe extends CooperativeStickyAssignor {
        MemberData decode(Subscription s) {
            return memberData(s);
        }
    }

    /** Exposes StickyAssignor's protected memberData(). */
    static final class StickyProbe extends StickyAssignor {
        MemberData decode(Subscription s) {
            return memberData(s);
        }
    }

    static void cooperativeStickyUserData() {
        CooperativeStickyAssignor fresh = new CooperativeStickyAssignor();
        byte[] initial = Hex.bytes(fresh.subscriptionUserData(new HashSet<>(List.of("foo"))));
        coop("cooperative-sticky-userdata-initial",
                "CooperativeStickyAssignor.subscriptionUserData before any assignment: generation -1",
                "new CooperativeStickyAssignor().subscriptionUserData(topics)", initial, true, null);

        CooperativeStickyAssignor a = new CooperativeStickyAssignor();
        a.onAssignment(new Assignment(List.of(tp("foo", 0))),
                new ConsumerGroupMetadata("group", 10, "member-1", Optional.empty()));
        byte[] gen10 = Hex.bytes(a.subscriptionUserData(new HashSet<>(List.of("foo"))));
        coop("cooperative-sticky-userdata-gen10",
                "CooperativeStickyAssignor.subscriptionUserData after onAssignment with generation 10",
                "CooperativeStickyAssignor.onAssignment(assignment, ConsumerGroupMetadata(generation 10)) then "
                        + "subscriptionUserData(topics)", gen10, true, null);
        coop("cooperative-sticky-userdata-truncated",
                "2-byte cooperative-sticky userData; Java's memberData falls back to generation -1",
                HAND_HOW, Hex.decode("000a"), false, null);
        coop("cooperative-sticky-userdata-trailing",
                "cooperative-sticky userData 0000000a followed by one extra byte; Java reads generation 10 and ignores the rest",
                HAND_HOW, Hex.decode("0000000aff"), false, null);
    }

    static void coop(String name, String description, String how, byte[] bytes, boolean canonical, String notes) {
        // memberData() only looks at userData when the subscription has no generation field (v0/v1 or -1).
        Subscription s = new Subscription(List.of("foo"), ByteBuffer.wrap(bytes), List.of());
        MemberData md = new CoopProbe().decode(s);
        Map<String, Object> expect = new LinkedHashMap<>();
        expect.put("generation", md.generation.orElse(null));
        addUserData("cooperative_sticky_user_data", name, description, how, bytes, canonical, expect,
                notes == null ? "expect = CooperativeStickyAssignor.memberData(subscription without generation field).generation"
                        : notes);
    }

    static void stickyUserData() {
        StickyAssignor assignor = new StickyAssignor();
        assignor.onAssignment(new Assignment(List.of(tp("foo", 0), tp("foo", 1))),
                new ConsumerGroupMetadata("group", 3, "member-1", Optional.empty()));
        byte[] v1 = Hex.bytes(assignor.subscriptionUserData(new HashSet<>(List.of("foo"))));
        sticky("sticky-userdata-v1", "StickyAssignor userData (V1 schema) after onAssignment(foo:[0,1], generation 3)",
                "StickyAssignor.onAssignment(assignment, ConsumerGroupMetadata(generation 3)) then subscriptionUserData(topics)",
                v1, true);

        StickyAssignor assignor2 = new StickyAssignor();
        assignor2.onAssignment(new Assignment(List.of(tp("bar", 2), tp("foo", 1), tp("bar", 0), tp("foo", 7))),
                new ConsumerGroupMetadata("group", 12, "member-1", Optional.empty()));
        byte[] v1b = Hex.bytes(assignor2.subscriptionUserData(new HashSet<>(List.of("foo", "bar"))));
        sticky("sticky-userdata-v1-two-topics",
                "StickyAssignor userData (V1) after onAssignment([bar-2, foo-1, bar-0, foo-7], generation 12)",
                "StickyAssignor.onAssignment(assignment, ConsumerGroupMetadata(generation 12)) then subscriptionUserData(topics)",
                v1b, true);

        sticky("sticky-userdata-v0", "hand-built StickyAssignor V0 userData foo:[0,1] without a generation",
                HAND_HOW, new W().i32(1).str("foo").i32(2).i32(0).i32(1).done(), false);
        sticky("sticky-userdata-unreadable",
                "userData that is neither V1 nor V0 (topic length runs past the end); Java falls back to no "
                        + "partitions and generation -1",
                HAND_HOW, Hex.decode("00000001000a666f"), false);
    }

    static void sticky(String name, String description, String how, byte[] bytes, boolean canonical) {
        Subscription s = new Subscription(List.of("foo"), ByteBuffer.wrap(bytes), List.of());
        MemberData md = new StickyProbe().decode(s);
        String format;
        if (md.generation.isEmpty()) {
            format = "v0";
        } else if (schemaReads("STICKY_ASSIGNOR_USER_DATA_V1", bytes)) {
            format = "v1";
        } else {
            if (schemaReads("STICKY_ASSIGNOR_USER_DATA_V0", bytes) || md.generation.get() != -1 || !md.partitions.isEmpty()) {
                throw new IllegalStateException(name + ": unexpected sticky memberData " + md.partitions + " " + md.generation);
            }
            format = "unreadable";
        }
        Map<String, Object> expect = new LinkedHashMap<>();
        expect.put("format", format);
        expect.put("previous_assignment", groupConsecutive(md.partitions));
        expect.put("generation", md.generation.orElse(null));
        addUserData("sticky_user_data", name, description, how, bytes, canonical, expect,
                "expect = StickyAssignor.memberData(subscription with this userData); format = which schema parsed "
                        + "(V1 first, then V0, else unreadable)");
    }

    static boolean schemaReads(String field, byte[] bytes) {
        try {
            Field f = StickyAssignor.class.getDeclaredField(field);
            f.setAccessible(true);
            Schema schema = (Schema) f.get(null);
            schema.read(ByteBuffer.wrap(bytes));
            return true;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        } catch (RuntimeException e) {
            return false;
        }
    }

    static List<Object> groupConsecutive(List<TopicPartition> partitions) {
        List<Object> out = new ArrayList<>();
        String current = null;
        List<Object> ps = null;
        for (TopicPartition tp : partitions) {
            if (!tp.topic().equals(current)) {
                current = tp.topic();
                ps = new ArrayList<>();
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("topic", current);
                m.put("partitions", ps);
                out.add(m);
            }
            ps.add(tp.partition());
        }
        return out;
    }

    // ---------------------------------------------------------------------------------------------- readers

    static final class Outcome {
        Map<String, Object> decoded;
        String error;
        ConsumerProtocolSubscription sub;
        ConsumerProtocolAssignment asg;
        short version;
    }

    static String describe(Throwable e) {
        return e.getClass().getSimpleName() + ": " + e.getMessage();
    }

    /** ConsumerProtocol's reader or the generated class's constructor, at a version. */
    interface VersionedReader<T> {
        T read(ByteBuffer buf, short version);
    }

    /**
     * Java reader that knows versions up to {@code maxKnown}: ConsumerProtocol.deserializeVersion, then
     * ConsumerProtocol.deserializeConsumerProtocol{Subscription,Assignment}(buf, min(v, maxKnown)), which is
     * the generated class's constructor over a ByteBufferAccessor with BufferUnderflowException turned into
     * SchemaException. The raw generated class is run too and must agree. Fills version and error; returns the
     * message (null on error), leaving {@code buf} after it.
     */
    static <T> T readVersioned(byte[] bytes, int maxKnown, ByteBuffer buf, Outcome o, VersionedReader<T> protocol,
                               VersionedReader<T> generated) {
        short v;
        try {
            v = ConsumerProtocol.deserializeVersion(buf);
        } catch (RuntimeException e) {
            o.error = describe(e);
            return null;
        }
        o.version = v;
        short readAs = v < 0 ? v : (short) Math.min(v, maxKnown);
        T d;
        try {
            d = protocol.read(buf, readAs);
        } catch (RuntimeException e) {
            if (v >= 0 && raw(bytes, readAs, generated) != null) {
                throw new IllegalStateException("raw reader accepted what ConsumerProtocol rejected: " + Hex.of(bytes));
            }
            o.error = describe(e);
            return null;
        }
        ByteBuffer raw = ByteBuffer.wrap(bytes);
        raw.position(2);
        T r = generated.read(raw, readAs);
        if (!r.equals(d) || raw.remaining() != buf.remaining()) {
            throw new IllegalStateException("raw reader disagrees with ConsumerProtocol on " + Hex.of(bytes));
        }
        o.decoded = new LinkedHashMap<>();
        o.decoded.put("version", (int) v);
        o.decoded.put("read_as_version", (int) readAs);
        return d;
    }

    /** The generated class's reading of the bytes after the version, or null when it throws. */
    static <T> T raw(byte[] bytes, short version, VersionedReader<T> generated) {
        ByteBuffer raw = ByteBuffer.wrap(bytes);
        raw.position(2);
        try {
            return generated.read(raw, version);
        } catch (RuntimeException e) {
            return null;
        }
    }

    static Outcome readSubscription(byte[] bytes, int maxKnown) {
        Outcome o = new Outcome();
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        ConsumerProtocolSubscription d = readVersioned(bytes, maxKnown, buf, o,
            ConsumerProtocol::deserializeConsumerProtocolSubscription,
            (b, v) -> new ConsumerProtocolSubscription(new ByteBufferAccessor(b), v));
        if (d == null) {
            return o;
        }
        Map<String, Object> m = o.decoded;
        m.put("topics", new ArrayList<Object>(d.topics()));
        m.put("user_data", d.userData() == null ? null : Hex.of(d.userData()));
        List<Object> owned = new ArrayList<>();
        for (ConsumerProtocolSubscription.TopicPartition tp : d.ownedPartitions()) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("topic", tp.topic());
            e.put("partitions", new ArrayList<Object>(tp.partitions()));
            owned.add(e);
        }
        m.put("owned_partitions", owned);
        m.put("generation_id", d.generationId());
        m.put("rack_id", d.rackId());
        m.put("trailing_bytes", buf.remaining());
        o.sub = d;
        return o;
    }

    static Outcome readAssignment(byte[] bytes, int maxKnown) {
        Outcome o = new Outcome();
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        ConsumerProtocolAssignment d = readVersioned(bytes, maxKnown, buf, o,
            ConsumerProtocol::deserializeConsumerProtocolAssignment,
            (b, v) -> new ConsumerProtocolAssignment(new ByteBufferAccessor(b), v));
        if (d == null) {
            return o;
        }
        Map<String, Object> m = o.decoded;
        List<Object> parts = new ArrayList<>();
        for (ConsumerProtocolAssignment.TopicPartition tp : d.assignedPartitions()) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("topic", tp.topic());
            e.put("partitions", new ArrayList<Object>(tp.partitions()));
            parts.add(e);
        }
        m.put("assigned_partitions", parts);
        m.put("user_data", d.userData() == null ? null : Hex.of(d.userData()));
        m.put("trailing_bytes", buf.remaining());
        o.asg = d;
        return o;
    }

    /** Does Java's canonical serializer, fed the decoded values at the clamped wire version, reproduce the bytes? */
    static boolean canonical(String kind, byte[] bytes, Outcome o) {
        if (o.decoded == null) {
            return false;
        }
        short v = (short) Math.min(o.version, HIGHEST);
        byte[] again;
        if (kind.equals("subscription")) {
            ConsumerProtocolSubscription d = o.sub;
            List<TopicPartition> owned = new ArrayList<>();
            for (ConsumerProtocolSubscription.TopicPartition tp : d.ownedPartitions()) {
                for (int p : tp.partitions()) {
                    owned.add(tp(tp.topic(), p));
                }
            }
            again = serializeSubscription(v, d.topics(), d.userData() == null ? null : d.userData().duplicate(), owned,
                    d.generationId(), Optional.ofNullable(d.rackId()));
        } else {
            ConsumerProtocolAssignment d = o.asg;
            List<TopicPartition> parts = new ArrayList<>();
            for (ConsumerProtocolAssignment.TopicPartition tp : d.assignedPartitions()) {
                for (int p : tp.partitions()) {
                    parts.add(tp(tp.topic(), p));
                }
            }
            again = serializeAssignment(v, parts, d.userData() == null ? null : d.userData().duplicate());
        }
        return Arrays.equals(again, bytes);
    }

    // ---------------------------------------------------------------------------------------------- records

    static Map<String, Object> producer(String how) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("implementation", IMPL);
        p.put("version", kafkaVersion);
        p.put("how", how);
        return p;
    }

    static void put(String name, Map<String, Object> vector) {
        if (VECTORS.put(name, vector) != null) {
            throw new IllegalStateException("duplicate vector name " + name);
        }
    }

    static void addPayload(String kind, String name, String description, String how, byte[] bytes, String notes,
                           Map<String, Object> lenient) {
        List<Object> readers = new ArrayList<>();
        Outcome top = null;
        for (int n = 0; n <= HIGHEST; n++) {
            Outcome o = kind.equals("subscription") ? readSubscription(bytes, n) : readAssignment(bytes, n);
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("reader_version", n);
            r.put("ok", o.decoded != null);
            if (o.decoded != null) {
                r.put("decoded", o.decoded);
            } else {
                r.put("java_error", o.error);
            }
            readers.add(r);
            top = o;
        }
        Map<String, Object> expect;
        if (top.decoded != null) {
            expect = top.decoded;
        } else {
            expect = new LinkedHashMap<>();
            expect.put("error", top.error);
        }
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("name", name);
        v.put("description", description);
        v.put("producer", producer(how));
        v.put("kind", kind);
        v.put("hex", Hex.of(bytes));
        v.put("canonical", canonical(kind, bytes, top));
        v.put("expect", expect);
        if (lenient != null) {
            v.put("lenient_expect", lenient);
        }
        v.put("readers", readers);
        if (notes != null) {
            v.put("notes", notes);
        }
        put(name, v);
    }

    static void bad(String kind, String name, String description, byte[] bytes, String notes) {
        addPayload(kind, name, description, HAND_HOW, bytes, notes, null);
        if (!VECTORS.get(name).get("expect").toString().startsWith("{error=")) {
            throw new IllegalStateException(name + " was meant to be rejected by Java but decoded: " + VECTORS.get(name));
        }
    }

    static void addUserData(String kind, String name, String description, String how, byte[] bytes, boolean canonical,
                            Map<String, Object> expect, String notes) {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("name", name);
        v.put("description", description);
        v.put("producer", producer(how));
        v.put("kind", kind);
        v.put("hex", Hex.of(bytes));
        v.put("canonical", canonical);
        v.put("expect", expect);
        v.put("readers", List.of());
        if (notes != null) {
            v.put("notes", notes);
        }
        put(name, v);
    }

    // ---------------------------------------------------------------------------------------------- helpers

    /** Big-endian byte writer for hand-built payloads. */
    static final class W {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();

        W i16(int v) {
            out.write((v >> 8) & 0xff);
            out.write(v & 0xff);
            return this;
        }

        W i32(int v) {
            i16(v >> 16);
            return i16(v);
        }

        W str(String s) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            i16(b.length);
            return raw(Hex.of(b));
        }

        W raw(String hex) {
            byte[] b = Hex.decode(hex);
            out.write(b, 0, b.length);
            return this;
        }

        byte[] done() {
            return out.toByteArray();
        }
    }

    static final class Hex {
        private Hex() {
        }

        static String of(byte[] b) {
            StringBuilder sb = new StringBuilder(b.length * 2);
            for (byte x : b) {
                sb.append(Character.forDigit((x >> 4) & 0xf, 16)).append(Character.forDigit(x & 0xf, 16));
            }
            return sb.toString();
        }

        static String of(ByteBuffer b) {
            return of(bytes(b));
        }

        static byte[] bytes(ByteBuffer b) {
            ByteBuffer d = b.duplicate();
            byte[] out = new byte[d.remaining()];
            d.get(out);
            return out;
        }

        static byte[] decode(String hex) {
            String h = hex.replace(" ", "");
            if (h.length() % 2 != 0) {
                throw new IllegalArgumentException("odd hex " + hex);
            }
            byte[] out = new byte[h.length() / 2];
            for (int i = 0; i < out.length; i++) {
                out[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
            }
            return out;
        }
    }
}
