package kcp.golden;

import java.util.List;
import java.util.Map;

/**
 * Cross-checks generated vectors against byte sequences computed by hand from the encoding rules
 * (kafka-java-reference.md section 1.4, which also reproduces sarama's published vectors). Any mismatch aborts
 * generation, so a committed vector set always agrees with them.
 */
final class SelfCheck {
    private SelfCheck() {
    }

    private static final String FOO = "0003666f6f";

    static void run(Map<String, Map<String, Object>> vectors) {
        String v1Body = "00000001" + FOO + "ffffffff" + "00000001" + FOO + "00000001" + "00000000";
        hex(vectors, "subscription-v0-basic", "0000" + "00000001" + FOO + "ffffffff");
        hex(vectors, "subscription-v1-basic", "0001" + v1Body);
        hex(vectors, "subscription-v2-basic", "0002" + v1Body + "00000005");
        hex(vectors, "subscription-v3-basic", "0003" + v1Body + "00000005" + "00027231");
        hex(vectors, "subscription-v3-userdata-null", "0003" + "00000001" + FOO + "ffffffff" + "00000000" + "ffffffff" + "ffff");
        hex(vectors, "subscription-v0-no-topics", "00000000000000000000");
        for (int v = 0; v <= 3; v++) {
            hex(vectors, "assignment-v" + v + "-basic",
                    "000" + v + "00000001" + FOO + "00000002" + "00000000" + "00000002" + "ffffffff");
        }
        // sarama groupMemberMetadataV0 / V1 / groupMemberAssignmentV0
        String saramaSub = "00000002" + "00036f6e65" + "000374776f" + "00000003010203";
        hex(vectors, "subscription-v0-userdata-bytes", "0000" + saramaSub);
        hex(vectors, "subscription-v1-userdata-bytes", "0001" + saramaSub + "00000000");
        hex(vectors, "assignment-v0-userdata-bytes",
                "0000" + "00000001" + "00036f6e65" + "00000003" + "00000000" + "00000002" + "00000004" + "00000003010203");
        // StickyAssignor V1 example foo:[0,1] generation 3; cooperative-sticky generations -1 and 10
        hex(vectors, "sticky-userdata-v1", "00000001" + FOO + "00000002" + "00000000" + "00000001" + "00000003");
        hex(vectors, "cooperative-sticky-userdata-initial", "ffffffff");
        hex(vectors, "cooperative-sticky-userdata-gen10", "0000000a");

        // Decoded values stated in section 1.4 for the future-version payloads.
        expect(vectors, "subscription-v100-future", "topics", List.of("topic"));
        expect(vectors, "subscription-v100-future", "user_data", "");
        expect(vectors, "subscription-v100-future", "generation_id", 1);
        expect(vectors, "subscription-v100-future", "rack_id", "rack-a");
        expect(vectors, "subscription-v100-future", "read_as_version", 3);
        expect(vectors, "subscription-v100-future", "trailing_bytes", 5);
        expect(vectors, "assignment-v100-future", "user_data", "");
        expect(vectors, "assignment-v100-future", "trailing_bytes", 5);
        // Java's UTF-16 order puts the supplementary character before U+E000 and U+FF21.
        expect(vectors, "subscription-v0-unicode-topics", "topics",
                List.of("a", "\u00e9t\u00e9", "\u65e5\u672c", "\ud83d\ude00", "\ue000", "\uff21"));
        // The sarama-cluster "v1 without owned partitions" payload is rejected by Java.
        Object err = ((Map<?, ?>) vectors.get("subscription-malformed-v1-missing-owned-partitions").get("expect")).get("error");
        if (err == null || !err.toString().startsWith("SchemaException")) {
            throw new IllegalStateException("v1-missing-owned-partitions: expected a SchemaException, got " + err);
        }
    }

    private static void hex(Map<String, Map<String, Object>> vectors, String name, String expected) {
        Object actual = get(vectors, name).get("hex");
        if (!expected.equals(actual)) {
            throw new IllegalStateException("self-check " + name + ": expected " + expected + " got " + actual);
        }
    }

    private static void expect(Map<String, Map<String, Object>> vectors, String name, String field, Object expected) {
        Object actual = ((Map<?, ?>) get(vectors, name).get("expect")).get(field);
        if (!expected.equals(actual)) {
            throw new IllegalStateException("self-check " + name + "." + field + ": expected " + expected + " got " + actual);
        }
    }

    private static Map<String, Object> get(Map<String, Map<String, Object>> vectors, String name) {
        Map<String, Object> v = vectors.get(name);
        if (v == null) {
            throw new IllegalStateException("self-check: no vector " + name);
        }
        return v;
    }
}
