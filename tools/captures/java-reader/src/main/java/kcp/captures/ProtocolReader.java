package kcp.captures;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ConsumerProtocolAssignment;
import org.apache.kafka.common.message.ConsumerProtocolSubscription;
import org.apache.kafka.common.protocol.ByteBufferAccessor;

/**
 * Reads consumer-protocol payloads with Apache Kafka's raw generated message classes.
 *
 * stdin: one payload per line, "subscription HEX", "assignment HEX", "sticky_user_data HEX" or
 * "cooperative_sticky_user_data HEX" (the last two: see UserDataReader).
 * stdout: one JSON object per line: {"kind":..,"hex":..,"canonical":bool,"expect":{..},"readers":[..]}
 *   expect  = what the reader at the highest version this kafka-clients knows returns (version clamped to it)
 *   readers = reader versions 0..3: the body parsed with layout min(v, N)
 *   canonical = ConsumerProtocol.serializeSubscription/serializeAssignment of the decoded value at
 *               min(v, highest) gives back exactly the input bytes.
 */
public final class ProtocolReader {

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            line = line.trim();
            if (line.isEmpty()) {
                continue;
            }
            String[] kv = line.split("\\s+");
            String kind = kv[0];
            String hex = kv.length > 1 ? kv[1] : "";
            byte[] bytes = unhex(hex);
            if (kind.equals("sticky_user_data") || kind.equals("cooperative_sticky_user_data")) {
                System.out.println(UserDataReader.read(kind, hex, bytes));
                continue;
            }
            boolean sub = kind.equals("subscription");
            short highest = sub ? ConsumerProtocolSubscription.HIGHEST_SUPPORTED_VERSION
                                : ConsumerProtocolAssignment.HIGHEST_SUPPORTED_VERSION;
            StringBuilder out = new StringBuilder();
            out.append("{\"kind\":").append(str(kind)).append(",\"hex\":").append(str(hex));
            out.append(",\"highest_known_version\":").append(highest);
            String expect = sub ? readSubscription(bytes, highest) : readAssignment(bytes, highest);
            out.append(",\"canonical\":").append(canonical(sub, bytes, highest));
            out.append(",\"expect\":").append(expect);
            out.append(",\"readers\":[");
            for (short n = 0; n <= 3; n++) {
                String r = sub ? readSubscription(bytes, n) : readAssignment(bytes, n);
                if (n > 0) {
                    out.append(',');
                }
                out.append("{\"reader_version\":").append(n);
                if (r.startsWith("{\"error\"")) {
                    out.append(",\"ok\":false,\"java_error\":").append(r, "{\"error\":".length(), r.length() - 1);
                } else {
                    out.append(",\"ok\":true,\"decoded\":").append(r);
                }
                out.append('}');
            }
            out.append("]}");
            System.out.println(out);
        }
    }

    /** A reader that knows versions up to maxKnown: version v, then the body with layout min(v, maxKnown). */
    static String readSubscription(byte[] bytes, short maxKnown) {
        try {
            ByteBuffer buf = ByteBuffer.wrap(bytes);
            short v = buf.getShort();
            if (v < ConsumerProtocolSubscription.LOWEST_SUPPORTED_VERSION) {
                throw new IllegalArgumentException("unsupported subscription version " + v);
            }
            short as = (short) Math.min(Math.min(v, maxKnown), ConsumerProtocolSubscription.HIGHEST_SUPPORTED_VERSION);
            ConsumerProtocolSubscription s = new ConsumerProtocolSubscription(new ByteBufferAccessor(buf), as);
            StringBuilder b = new StringBuilder("{");
            b.append("\"version\":").append(v).append(",\"read_as_version\":").append(as);
            b.append(",\"topics\":[");
            for (int i = 0; i < s.topics().size(); i++) {
                b.append(i > 0 ? "," : "").append(str(s.topics().get(i)));
            }
            b.append("],\"user_data\":").append(s.userData() == null ? "null" : str(hex(s.userData())));
            b.append(",\"owned_partitions\":[");
            int i = 0;
            for (ConsumerProtocolSubscription.TopicPartition tp : s.ownedPartitions()) {
                b.append(i++ > 0 ? "," : "").append("{\"topic\":").append(str(tp.topic())).append(",\"partitions\":")
                        .append(ints(tp.partitions())).append('}');
            }
            b.append("],\"generation_id\":").append(s.generationId());
            b.append(",\"rack_id\":").append(s.rackId() == null ? "null" : str(s.rackId()));
            b.append(",\"trailing_bytes\":").append(buf.remaining()).append('}');
            return b.toString();
        } catch (Exception e) {
            return "{\"error\":" + str(e.getClass().getSimpleName() + ": " + e.getMessage()) + "}";
        }
    }

    static String readAssignment(byte[] bytes, short maxKnown) {
        try {
            ByteBuffer buf = ByteBuffer.wrap(bytes);
            short v = buf.getShort();
            if (v < ConsumerProtocolAssignment.LOWEST_SUPPORTED_VERSION) {
                throw new IllegalArgumentException("unsupported assignment version " + v);
            }
            short as = (short) Math.min(Math.min(v, maxKnown), ConsumerProtocolAssignment.HIGHEST_SUPPORTED_VERSION);
            ConsumerProtocolAssignment a = new ConsumerProtocolAssignment(new ByteBufferAccessor(buf), as);
            StringBuilder b = new StringBuilder("{");
            b.append("\"version\":").append(v).append(",\"read_as_version\":").append(as);
            b.append(",\"assigned_partitions\":[");
            int i = 0;
            for (ConsumerProtocolAssignment.TopicPartition tp : a.assignedPartitions()) {
                b.append(i++ > 0 ? "," : "").append("{\"topic\":").append(str(tp.topic())).append(",\"partitions\":")
                        .append(ints(tp.partitions())).append('}');
            }
            b.append("],\"user_data\":").append(a.userData() == null ? "null" : str(hex(a.userData())));
            b.append(",\"trailing_bytes\":").append(buf.remaining()).append('}');
            return b.toString();
        } catch (Exception e) {
            return "{\"error\":" + str(e.getClass().getSimpleName() + ": " + e.getMessage()) + "}";
        }
    }

    /** Does Java's own serializer, fed the decoded value, give back exactly these bytes? */
    static boolean canonical(boolean sub, byte[] bytes, short highest) {
        try {
            ByteBuffer buf = ByteBuffer.wrap(bytes);
            short v = buf.getShort();
            short as = (short) Math.min(v, highest);
            ByteBuffer again;
            if (sub) {
                ConsumerProtocolSubscription s = new ConsumerProtocolSubscription(new ByteBufferAccessor(buf), as);
                List<TopicPartition> owned = new ArrayList<>();
                for (ConsumerProtocolSubscription.TopicPartition tp : s.ownedPartitions()) {
                    for (int p : tp.partitions()) {
                        owned.add(new TopicPartition(tp.topic(), p));
                    }
                }
                ConsumerPartitionAssignor.Subscription value = new ConsumerPartitionAssignor.Subscription(
                        s.topics(), s.userData(), owned,
                        s.generationId(),
                        Optional.ofNullable(s.rackId()));
                again = ConsumerProtocol.serializeSubscription(value, as);
            } else {
                ConsumerProtocolAssignment a = new ConsumerProtocolAssignment(new ByteBufferAccessor(buf), as);
                List<TopicPartition> parts = new ArrayList<>();
                for (ConsumerProtocolAssignment.TopicPartition tp : a.assignedPartitions()) {
                    for (int p : tp.partitions()) {
                        parts.add(new TopicPartition(tp.topic(), p));
                    }
                }
                again = ConsumerProtocol.serializeAssignment(new ConsumerPartitionAssignor.Assignment(parts, a.userData()), as);
            }
            byte[] out = new byte[again.remaining()];
            again.get(out);
            return java.util.Arrays.equals(out, bytes);
        } catch (Exception e) {
            return false;
        }
    }

    static String ints(List<Integer> xs) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < xs.size(); i++) {
            b.append(i > 0 ? "," : "").append(xs.get(i));
        }
        return b.append(']').toString();
    }

    static byte[] unhex(String s) {
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) {
            s.append(String.format("%02x", x));
        }
        return s.toString();
    }

    static String hex(ByteBuffer b) {
        ByteBuffer d = b.duplicate();
        byte[] out = new byte[d.remaining()];
        d.get(out);
        return hex(out);
    }

    static String str(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }
}
