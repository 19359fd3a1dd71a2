package kcp.javaref;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import org.apache.kafka.common.TopicPartition;

/** Scenario model: exactly what goes into the `kcp assign` input JSON. */
final class Model {
    private Model() {}

    static final Comparator<TopicPartition> TP_ORDER =
        Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition);

    static final class Member {
        String memberId;
        String instanceId;            // group.instance.id, null for dynamic members
        List<String> topics = new ArrayList<>();
        List<TopicPartition> owned = new ArrayList<>();
        int generation = -1;          // -1 = absent
        String rack;                  // null = absent
        /** What this member's StickyAssignor would put in user_data (null: no user data). */
        StickyUD sticky;
        /** What this member's CooperativeStickyAssignor would put in user_data (null: no user data). */
        CoopUD coop;

        Member(String id) {
            this.memberId = id;
        }

        Member copy() {
            Member m = new Member(memberId);
            m.instanceId = instanceId;
            m.topics = new ArrayList<>(topics);
            m.owned = new ArrayList<>(owned);
            m.generation = generation;
            m.rack = rack;
            m.sticky = sticky;
            m.coop = coop;
            return m;
        }

        /** Canonical order as the Java client puts it on the wire: topics sorted, owned sorted by (topic, partition). */
        void canonicalize() {
            topics = new ArrayList<>(new TreeSet<>(topics));
            owned = new ArrayList<>(owned);
            owned.sort(TP_ORDER);
        }
    }

    /**
     * StickyAssignor user data: V1 (previous assignment + generation) produced by a real StickyAssignor
     * after onAssignment(prev, generation); V0 (no generation field) when gen == null; or raw bytes.
     */
    static final class StickyUD {
        final List<TopicPartition> prev;
        final Integer gen;
        final byte[] raw;

        StickyUD(List<TopicPartition> prev, Integer gen, byte[] raw) {
            this.prev = prev;
            this.gen = gen;
            this.raw = raw;
        }

        static StickyUD v1(List<TopicPartition> prev, int gen) {
            return new StickyUD(new ArrayList<>(prev), gen, null);
        }

        static StickyUD v0(List<TopicPartition> prev) {
            return new StickyUD(new ArrayList<>(prev), null, null);
        }

        static StickyUD raw(byte[] raw) {
            return new StickyUD(null, null, raw);
        }
    }

    /** CooperativeStickyAssignor user data: int32 generation as a real assignor writes it, or raw bytes. */
    static final class CoopUD {
        final Integer gen;
        final byte[] raw;

        CoopUD(Integer gen, byte[] raw) {
            this.gen = gen;
            this.raw = raw;
        }

        static CoopUD gen(int g) {
            return new CoopUD(g, null);
        }

        static CoopUD raw(byte[] raw) {
            return new CoopUD(null, raw);
        }
    }

    static final class Scenario {
        String name;
        String description;
        final LinkedHashMap<String, Integer> topics = new LinkedHashMap<>();
        /** topic -> per partition list of replica racks; null when the scenario has no rack metadata. */
        LinkedHashMap<String, List<List<String>>> partitionRacks;
        final List<Member> members = new ArrayList<>();

        Scenario(String name, String description) {
            this.name = name;
            this.description = description;
        }

        Member member(String id) {
            for (Member m : members) if (m.memberId.equals(id)) return m;
            throw new IllegalArgumentException(id);
        }
    }

    /** Groups a list into consecutive runs of the same topic, keeping the exact order. */
    static List<Object> runs(List<TopicPartition> tps) {
        List<Object> out = Json.arr();
        Map<String, Object> cur = null;
        List<Object> parts = null;
        for (TopicPartition tp : tps) {
            if (cur == null || !cur.get("topic").equals(tp.topic())) {
                cur = Json.obj();
                parts = Json.arr();
                cur.put("topic", tp.topic());
                cur.put("partitions", parts);
                out.add(cur);
            }
            parts.add(tp.partition());
        }
        return out;
    }

    static String hex(byte[] b) {
        if (b == null) return null;
        StringBuilder sb = new StringBuilder();
        for (byte x : b) sb.append(String.format("%02x", x & 0xff));
        return sb.toString();
    }

    static Map<String, Object> inputJson(Scenario s) {
        Map<String, Object> in = Json.obj();
        Map<String, Object> topics = Json.obj();
        s.topics.forEach(topics::put);
        in.put("topics", topics);
        if (s.partitionRacks != null) {
            Map<String, Object> pr = Json.obj();
            s.partitionRacks.forEach((t, racks) -> {
                List<Object> l = Json.arr();
                for (List<String> r : racks) l.add(new ArrayList<Object>(r));
                pr.put(t, l);
            });
            in.put("partition_racks", pr);
        }
        List<Object> members = Json.arr();
        for (Member m : s.members) {
            Map<String, Object> o = Json.obj();
            o.put("member_id", m.memberId);
            o.put("group_instance_id", m.instanceId);
            o.put("topics", new ArrayList<Object>(m.topics));
            o.put("owned_partitions", runs(m.owned));
            o.put("generation_id", m.generation);
            o.put("rack_id", m.rack);
            o.put("user_data", null);
            members.add(o);
        }
        in.put("members", members);
        return in;
    }
}
