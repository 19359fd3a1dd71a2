package kcp.javaref;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

import kcp.javaref.Model.CoopUD;
import kcp.javaref.Model.Member;
import kcp.javaref.Model.Scenario;
import kcp.javaref.Model.StickyUD;

/** Runs Java's assignors on a scenario through the public assign(Cluster, GroupSubscription) API. */
final class Runner {
    private Runner() {}

    static final String GROUP_ID = "kcp-parity-group";

    enum Strategy {
        RANGE("range"), ROUNDROBIN("roundrobin"), STICKY("sticky"), COOP("cooperative-sticky");

        final String wire;

        Strategy(String wire) {
            this.wire = wire;
        }

        ConsumerPartitionAssignor newAssignor() {
            switch (this) {
                case RANGE: return new RangeAssignor();
                case ROUNDROBIN: return new RoundRobinAssignor();
                case STICKY: return new StickyAssignor();
                default: return new CooperativeStickyAssignor();
            }
        }
    }

    /** How the leader's member -> subscription map is built. */
    enum MapKind {
        /** HashMap filled in input order, as ConsumerCoordinator.onLeaderElected does. */
        HASH,
        /** LinkedHashMap in reverse input order (only used to probe order dependence). */
        REVERSED_LINKED
    }

    static Cluster cluster(Scenario s) {
        Map<String, Node> rackNodes = new LinkedHashMap<>();
        List<PartitionInfo> parts = new ArrayList<>();
        for (Map.Entry<String, Integer> t : s.topics.entrySet()) {
            List<List<String>> racks = s.partitionRacks == null ? null : s.partitionRacks.get(t.getKey());
            for (int p = 0; p < t.getValue(); p++) {
                List<String> pr = racks == null || p >= racks.size() ? Collections.emptyList() : racks.get(p);
                Node[] replicas = new Node[pr.size()];
                for (int i = 0; i < pr.size(); i++) {
                    String rack = pr.get(i);
                    replicas[i] = rackNodes.computeIfAbsent(rack, r -> new Node(rackNodes.size(), "broker-" + r, 9092, r));
                }
                parts.add(new PartitionInfo(t.getKey(), p, replicas.length > 0 ? replicas[0] : null, replicas, replicas));
            }
        }
        return new Cluster("kcp-parity", new ArrayList<>(rackNodes.values()), parts, Collections.emptySet(), Collections.emptySet());
    }

    static byte[] encodeSticky(Member m, StickyUD ud) {
        if (ud == null) return null;
        if (ud.raw != null) return ud.raw.clone();
        if (ud.gen != null) {
            StickyAssignor a = new StickyAssignor();
            a.onAssignment(new Assignment(new ArrayList<>(ud.prev)),
                new ConsumerGroupMetadata(GROUP_ID, ud.gen, m.memberId, Optional.ofNullable(m.instanceId)));
            return bytes(a.subscriptionUserData(new HashSet<>(m.topics)));
        }
        // V0 (pre-KIP-341 StickyAssignor): [topic: string, partitions: [int32]] array, no generation.
        Map<String, List<Integer>> byTopic = new LinkedHashMap<>();
        for (TopicPartition tp : ud.prev) byTopic.computeIfAbsent(tp.topic(), k -> new ArrayList<>()).add(tp.partition());
        int size = 4;
        for (Map.Entry<String, List<Integer>> e : byTopic.entrySet())
            size += 2 + e.getKey().getBytes(java.nio.charset.StandardCharsets.UTF_8).length + 4 + 4 * e.getValue().size();
        ByteBuffer b = ByteBuffer.allocate(size);
        b.putInt(byTopic.size());
        for (Map.Entry<String, List<Integer>> e : byTopic.entrySet()) {
            byte[] t = e.getKey().getBytes(java.nio.charset.StandardCharsets.UTF_8);
            b.putShort((short) t.length).put(t).putInt(e.getValue().size());
            for (int p : e.getValue()) b.putInt(p);
        }
        return b.array();
    }

    static byte[] encodeCoop(Member m, CoopUD ud) {
        if (ud == null) return null;
        if (ud.raw != null) return ud.raw.clone();
        CooperativeStickyAssignor a = new CooperativeStickyAssignor();
        if (ud.gen != -1) {
            a.onAssignment(new Assignment(new ArrayList<>(m.owned)),
                new ConsumerGroupMetadata(GROUP_ID, ud.gen, m.memberId, Optional.ofNullable(m.instanceId)));
        }
        return bytes(a.subscriptionUserData(new HashSet<>(m.topics)));
    }

    static byte[] bytes(ByteBuffer b) {
        if (b == null) return null;
        ByteBuffer d = b.duplicate();
        byte[] out = new byte[d.remaining()];
        d.get(out);
        return out;
    }

    static byte[] userData(Member m, Strategy st) {
        switch (st) {
            case STICKY: return encodeSticky(m, m.sticky);
            case COOP: return encodeCoop(m, m.coop);
            default: return null;
        }
    }

    /** The subscription exactly as the leader sees it: serialized at v3 and read back by ConsumerProtocol. */
    static Subscription wireSubscription(Member m, byte[] userData) {
        Subscription sub = new Subscription(new ArrayList<>(m.topics), userData == null ? null : ByteBuffer.wrap(userData),
            new ArrayList<>(m.owned), m.generation, Optional.ofNullable(m.rack));
        ByteBuffer wire = ConsumerProtocol.serializeSubscription(sub, (short) 3);
        Subscription d = ConsumerProtocol.deserializeSubscription(wire);
        d.setGroupInstanceId(Optional.ofNullable(m.instanceId));
        return d;
    }

    static Map<String, Subscription> subscriptions(Scenario s, Strategy st, MapKind kind) {
        Map<String, Subscription> map = kind == MapKind.HASH ? new HashMap<>() : new LinkedHashMap<>();
        List<Member> order = new ArrayList<>(s.members);
        if (kind == MapKind.REVERSED_LINKED) Collections.reverse(order);
        for (Member m : order) map.put(m.memberId, wireSubscription(m, userData(m, st)));
        return map;
    }

    /** Java's result: per member (input order) its partitions in Java's order, or an exception. */
    static final class Outcome {
        final LinkedHashMap<String, List<TopicPartition>> assignments = new LinkedHashMap<>();
        String error;

        Object json() {
            Map<String, Object> o = Json.obj();
            if (error != null) {
                o.put("error", error);
                return o;
            }
            Map<String, Object> a = Json.obj();
            assignments.forEach((k, v) -> a.put(k, Model.runs(v)));
            o.put("assignments", a);
            return o;
        }

        String signature() {
            if (error != null) return "error:" + error;
            return assignments.toString();
        }
    }

    static Outcome run(Scenario s, Strategy st, MapKind kind) {
        Outcome out = new Outcome();
        try {
            Map<String, Subscription> subs = subscriptions(s, st, kind);
            GroupAssignment ga = st.newAssignor().assign(cluster(s), new GroupSubscription(subs));
            Map<String, Assignment> res = ga.groupAssignment();
            for (Member m : s.members) {
                Assignment a = res.get(m.memberId);
                if (a != null) out.assignments.put(m.memberId, new ArrayList<>(a.partitions()));
            }
            for (String k : res.keySet()) {
                if (!out.assignments.containsKey(k)) out.assignments.put(k, new ArrayList<>(res.get(k).partitions()));
            }
        } catch (RuntimeException e) {
            out.assignments.clear();
            out.error = e.getClass().getName() + ": " + e.getMessage();
        }
        return out;
    }

    /**
     * Rounds recorded for the committed results: Java needs up to 18 on some large rack-aware groups, and
     * on a few never stops withholding (the results then say {@code converged: false}).
     */
    static final int MAX_COOP_ROUNDS = 30;

    /**
     * Rounds the generator plays for a prior plan (the state a reassignment starts from): kept at the
     * original 10 so that raising {@link #MAX_COOP_ROUNDS} changed no committed input.
     */
    static final int PLAN_COOP_ROUNDS = 10;

    /** Cooperative-sticky rounds: follow-ups until no member is asked to revoke anything. */
    static final class CoopRounds {
        final List<Outcome> rounds = new ArrayList<>();
        final List<Integer> generations = new ArrayList<>();
        boolean converged;
    }

    static int startGeneration(Scenario s) {
        int g = 0;
        for (Member m : s.members) {
            g = Math.max(g, m.generation);
            if (m.coop != null && m.coop.gen != null) g = Math.max(g, m.coop.gen);
            if (m.coop != null && m.coop.raw != null && m.coop.raw.length == 4) g = Math.max(g, ByteBuffer.wrap(m.coop.raw).getInt());
        }
        return g + 1;
    }

    static CoopRounds coopRounds(Scenario s, MapKind kind) {
        return coopRounds(s, kind, MAX_COOP_ROUNDS);
    }

    static CoopRounds coopRounds(Scenario s, MapKind kind, int maxRounds) {
        CoopRounds r = new CoopRounds();
        Scenario cur = s;
        int gen = startGeneration(s);
        r.generations.add(null);
        for (int round = 0; round < maxRounds; round++) {
            Outcome o = run(cur, Strategy.COOP, kind);
            r.rounds.add(o);
            if (o.error != null) return r;
            boolean revoked = false;
            for (Member m : cur.members) {
                Set<TopicPartition> assigned = new HashSet<>(o.assignments.getOrDefault(m.memberId, Collections.emptyList()));
                for (TopicPartition tp : m.owned) if (!assigned.contains(tp)) revoked = true;
            }
            if (!revoked) {
                r.converged = true;
                return r;
            }
            // next round: every member rejoins owning exactly what it was just assigned, at the new generation
            Scenario next = new Scenario(s.name, s.description);
            next.topics.putAll(s.topics);
            next.partitionRacks = s.partitionRacks;
            for (Member m : cur.members) {
                Member n = m.copy();
                n.owned = new ArrayList<>(o.assignments.getOrDefault(m.memberId, Collections.emptyList()));
                n.generation = gen;
                n.coop = CoopUD.gen(gen);
                next.members.add(n);
            }
            r.generations.add(gen);
            gen++;
            cur = next;
        }
        return r;
    }

    static String coopSignature(CoopRounds r) {
        StringBuilder sb = new StringBuilder();
        for (Outcome o : r.rounds) sb.append(o.signature()).append('|');
        return sb.toString();
    }
}
