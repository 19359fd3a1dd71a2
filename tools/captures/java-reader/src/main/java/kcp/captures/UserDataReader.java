package kcp.captures;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.consumer.internals.AbstractStickyAssignor;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.types.Schema;

/**
 * How Apache Kafka's own assignors read a Subscription's user data.
 *
 * sticky_user_data: StickyAssignor.memberData(subscription) (StickyAssignorUserData V1, then V0, then "unreadable":
 * empty with generation -1). Which layout Java accepted is found by reading with Java's own two schemas, in the same
 * order (private fields, read by reflection).
 * cooperative_sticky_user_data: CooperativeStickyAssignor.memberData(subscription) for a subscription that carries no
 * generation field (v0/v1), i.e. the generation Java takes from the user data.
 */
final class UserDataReader {

    private static final class Sticky extends StickyAssignor {
        AbstractStickyAssignor.MemberData read(ByteBuffer userData) {
            return memberData(new ConsumerPartitionAssignor.Subscription(Collections.emptyList(), userData));
        }
    }

    private static final class Coop extends CooperativeStickyAssignor {
        AbstractStickyAssignor.MemberData read(ByteBuffer userData) {
            return memberData(new ConsumerPartitionAssignor.Subscription(Collections.emptyList(), userData));
        }
    }

    static String read(String kind, String hex, byte[] bytes) {
        StringBuilder out = new StringBuilder();
        out.append("{\"kind\":").append(ProtocolReader.str(kind)).append(",\"hex\":").append(ProtocolReader.str(hex));
        try {
            if (kind.equals("cooperative_sticky_user_data")) {
                AbstractStickyAssignor.MemberData md = new Coop().read(ByteBuffer.wrap(bytes));
                ByteBuffer again = new CooperativeStickyAssignorWithGeneration(md.generation.orElse(-1)).userData();
                out.append(",\"canonical\":").append(md.generation.isPresent() && equal(again, bytes));
                out.append(",\"expect\":{\"generation\":").append(md.generation.map(String::valueOf).orElse("null")).append('}');
            } else {
                String format = stickyFormat(bytes);
                AbstractStickyAssignor.MemberData md = new Sticky().read(ByteBuffer.wrap(bytes));
                boolean canonical = false;
                if (!format.equals("unreadable")) {
                    Method ser = StickyAssignor.class.getDeclaredMethod("serializeTopicPartitionAssignment",
                            AbstractStickyAssignor.MemberData.class);
                    ser.setAccessible(true);
                    canonical = equal((ByteBuffer) ser.invoke(null, md), bytes);
                }
                out.append(",\"canonical\":").append(canonical);
                out.append(",\"expect\":{\"format\":").append(ProtocolReader.str(format));
                out.append(",\"previous_assignment\":").append(byTopic(md.partitions));
                out.append(",\"generation\":").append(md.generation.map(String::valueOf).orElse("null")).append('}');
            }
        } catch (Exception e) {
            out.append(",\"canonical\":false,\"expect\":{\"error\":")
                    .append(ProtocolReader.str(e.getClass().getSimpleName() + ": " + e.getMessage())).append('}');
        }
        return out.append(",\"readers\":[]}").toString();
    }

    /** Same order as StickyAssignor.deserializeTopicPartitionAssignment: V1, then V0, else unreadable. */
    static String stickyFormat(byte[] bytes) throws Exception {
        try {
            schema("STICKY_ASSIGNOR_USER_DATA_V1").read(ByteBuffer.wrap(bytes));
            return "v1";
        } catch (RuntimeException e1) {
            try {
                schema("STICKY_ASSIGNOR_USER_DATA_V0").read(ByteBuffer.wrap(bytes));
                return "v0";
            } catch (RuntimeException e2) {
                return "unreadable";
            }
        }
    }

    private static Schema schema(String name) throws Exception {
        Field f = StickyAssignor.class.getDeclaredField(name);
        f.setAccessible(true);
        return (Schema) f.get(null);
    }

    /** CooperativeStickyAssignor.subscriptionUserData after onAssignment with the given generation. */
    private static final class CooperativeStickyAssignorWithGeneration {
        private final int generation;

        CooperativeStickyAssignorWithGeneration(int generation) {
            this.generation = generation;
        }

        ByteBuffer userData() {
            CooperativeStickyAssignor a = new CooperativeStickyAssignor();
            a.onAssignment(new ConsumerPartitionAssignor.Assignment(Collections.emptyList()),
                    new org.apache.kafka.clients.consumer.ConsumerGroupMetadata("g", generation, "m", Optional.empty()));
            return a.subscriptionUserData(Collections.emptySet());
        }
    }

    private static boolean equal(ByteBuffer b, byte[] bytes) {
        ByteBuffer d = b.duplicate();
        byte[] out = new byte[d.remaining()];
        d.get(out);
        return java.util.Arrays.equals(out, bytes);
    }

    private static String byTopic(List<TopicPartition> parts) {
        // wire order of topics is kept as Java lists it; partitions as Java lists them
        Map<String, List<Integer>> m = new java.util.LinkedHashMap<>();
        for (TopicPartition tp : parts) {
            m.computeIfAbsent(tp.topic(), t -> new ArrayList<>()).add(tp.partition());
        }
        StringBuilder b = new StringBuilder("[");
        int i = 0;
        for (Map.Entry<String, List<Integer>> e : m.entrySet()) {
            b.append(i++ > 0 ? "," : "").append("{\"topic\":").append(ProtocolReader.str(e.getKey()))
                    .append(",\"partitions\":").append(ProtocolReader.ints(e.getValue())).append('}');
        }
        return b.append(']').toString();
    }
}
