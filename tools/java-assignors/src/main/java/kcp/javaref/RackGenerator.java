package kcp.javaref;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.apache.kafka.common.TopicPartition;

import kcp.javaref.Model.Member;
import kcp.javaref.Model.Scenario;
import kcp.javaref.Runner.Strategy;

/**
 * The seeded rack-aware parity set (KIP-881): several hundred small groups over 2-4 racks, replication 1-3,
 * balanced and unbalanced rack placements, all replicas on one rack set, members without racks or on racks no
 * replica uses, uniform and mixed subscriptions; first assignments and reassignments after joins, leaves, rack
 * changes, added partitions and subscription changes. Every choice comes from a java.util.Random seeded per
 * scenario, so the set is the same on every run and a scenario does not change when another one does.
 */
final class RackGenerator {
    static final int COUNT = 420;
    /** Groups beyond the Rust assignors' exact polish (more than 128 members): their heuristics alone. */
    static final int LARGE = 6;
    private static final long BASE_SEED = 0x7261636bL; // "rack"

    private static final String[] PLACEMENTS = {"rotate", "random", "unbalanced", "one-rack-set", "one-rack", "mixed-rf"};
    private static final String[] MEMBER_RACKS = {"round-robin", "unbalanced", "some-without", "some-foreign", "all-one-rack"};
    private static final String[] CHANGES = {"fresh", "join", "leave", "rack-change", "join-and-leave",
        "partitions-added", "resubscribe", "rack-unaware-prior"};
    private static final Strategy[] PRIOR = {Strategy.STICKY, Strategy.COOP, Strategy.RANGE, Strategy.ROUNDROBIN};

    private Random rnd;

    List<Scenario> generate() {
        List<Scenario> out = new ArrayList<>();
        for (int i = 0; i < COUNT; i++) {
            rnd = new Random(BASE_SEED * 1_000_003L + i);
            out.add(scenario(i));
        }
        for (int i = 0; i < LARGE; i++) {
            rnd = new Random(BASE_SEED * 1_000_003L + COUNT + i);
            out.add(large(i));
        }
        for (Scenario s : out) for (Member m : s.members) m.canonicalize();
        return out;
    }

    /** Adds the first {@code count} of {@code ids}: subscribed to {@code topics} (mixed: a random subset), racks per {@code memberRacks}. */
    private void addMembers(Scenario s, List<String> ids, int count, List<String> topics, boolean mixed, List<String> racks,
                            String memberRacks) {
        for (int k = 0; k < count; k++) {
            Member m = Generator.add(s, ids.get(k), mixed ? subset(topics) : topics);
            m.rack = memberRack(k, racks, memberRacks);
        }
    }

    private Scenario scenario(int i) {
        String change = CHANGES[i % CHANGES.length];
        String placement = PLACEMENTS[(i / CHANGES.length) % PLACEMENTS.length];
        String memberRacks = MEMBER_RACKS[(i / (CHANGES.length * PLACEMENTS.length)) % MEMBER_RACKS.length];
        boolean mixed = rnd.nextInt(5) < 2;
        int nRacks = 2 + rnd.nextInt(3);
        List<String> racks = new ArrayList<>();
        for (int r = 0; r < nRacks; r++) racks.add(i % 2 == 0 ? "r" + r : "az-" + (char) ('a' + r));
        int rf = 1 + rnd.nextInt(Math.min(3, nRacks));
        String name = String.format("%s-%s-%s-%s-%d", change, placement, memberRacks, mixed ? "mixed" : "uniform", i);
        Scenario s = new Scenario(name, "");

        int nt = 1 + rnd.nextInt(4);
        for (int t = 0; t < nt; t++) s.topics.put("t" + t, 1 + rnd.nextInt(t == 0 ? 16 : 10));
        List<String> topics = new ArrayList<>(s.topics.keySet());
        place(s, topics, racks, rf, placement);

        int n = 2 + rnd.nextInt(8);
        List<String> ids = ids(n + 3);
        addMembers(s, ids, n, topics, mixed, racks, memberRacks);
        StringBuilder d = new StringBuilder();
        d.append(n).append(mixed ? " members (mixed subscriptions)" : " members (uniform)")
            .append(", member racks ").append(memberRacks).append(", partition racks ").append(placement)
            .append(" over ").append(racks).append(" (RF ").append(rf).append("), topics ").append(s.topics);
        if (change.equals("fresh")) {
            s.description = d.append("; first assignment").toString();
            return s;
        }

        Strategy prior = PRIOR[rnd.nextInt(PRIOR.length)];
        int gen = 1 + rnd.nextInt(12);
        Map<String, List<TopicPartition>> plan;
        if (change.equals("rack-unaware-prior")) {
            // The previous plan was made before the members had racks (or by a rack-unaware client).
            LinkedHashMap<String, List<List<String>>> saved = s.partitionRacks;
            s.partitionRacks = null;
            plan = Generator.javaPlan(s, prior);
            s.partitionRacks = saved;
        } else {
            plan = Generator.javaPlan(s, prior);
        }
        Generator.ownPlan(s, plan, gen);
        d.append("; previous ownership = Java ").append(prior.wire)
            .append(change.equals("rack-unaware-prior") ? " rack-unaware" : "").append(" plan at generation ").append(gen);
        switch (change) {
            case "join": {
                int j = 1 + rnd.nextInt(3);
                for (int k = 0; k < j; k++) {
                    Member m = Generator.add(s, ids.get(n + k), mixed ? subset(topics) : topics);
                    m.rack = memberRack(n + k, racks, memberRacks);
                }
                d.append("; ").append(j).append(" joined");
                break;
            }
            case "leave": {
                int l = 1 + rnd.nextInt(Math.max(1, n / 2));
                for (int k = 0; k < l && s.members.size() > 1; k++) s.members.remove(rnd.nextInt(s.members.size()));
                d.append("; ").append(l).append(" left");
                break;
            }
            case "rack-change": {
                // Members moved to another rack (or lost / gained their rack) since the previous plan.
                int c = 0;
                for (Member m : s.members) {
                    if (rnd.nextInt(3) != 0) continue;
                    int pick = rnd.nextInt(nRacks + 1);
                    m.rack = pick == nRacks ? null : racks.get(pick);
                    c++;
                }
                if (c == 0) s.members.get(0).rack = racks.get((racks.indexOf(s.members.get(0).rack) + 1) % nRacks);
                d.append("; ").append(Math.max(c, 1)).append(" members changed rack");
                break;
            }
            case "join-and-leave": {
                s.members.remove(rnd.nextInt(s.members.size()));
                Member m = Generator.add(s, ids.get(n), mixed ? subset(topics) : topics);
                m.rack = memberRack(n, racks, memberRacks);
                d.append("; 1 left, 1 joined");
                break;
            }
            case "partitions-added": {
                for (String t : topics) s.topics.put(t, s.topics.get(t) + rnd.nextInt(5));
                place(s, topics, racks, rf, placement);
                d.append("; partitions added: ").append(s.topics);
                break;
            }
            case "resubscribe": {
                for (Member m : s.members) if (rnd.nextInt(3) == 0) m.topics = subset(topics);
                d.append("; some members changed their subscriptions");
                break;
            }
            default:
                break;
        }
        s.description = d.toString();
        return s;
    }

    /**
     * 140-200 members on 3 racks (one rack holding half of them), 8-16 topics of 10-40 partitions, RF 1-2:
     * uniform and mixed subscriptions, first assignments and reassignments after joins and rack changes.
     */
    private Scenario large(int i) {
        boolean mixed = i % 2 == 1;
        String change = i < 2 ? "fresh" : i < 4 ? "join" : "rack-unaware-prior";
        List<String> racks = List.of("az-a", "az-b", "az-c");
        int rf = 1 + i % 2;
        Scenario s = new Scenario(String.format("large-%s-%s-%d", change, mixed ? "mixed" : "uniform", i), "");
        int nt = 8 + rnd.nextInt(9);
        for (int t = 0; t < nt; t++) s.topics.put("topic" + t, 10 + rnd.nextInt(31));
        List<String> topics = new ArrayList<>(s.topics.keySet());
        place(s, topics, racks, rf, "random");
        int n = 140 + rnd.nextInt(61);
        for (int k = 0; k < n; k++) {
            Member m = Generator.add(s, String.format("member-%03d", k), mixed ? subset(topics) : topics);
            m.rack = rnd.nextBoolean() ? racks.get(0) : racks.get(1 + rnd.nextInt(2));
        }
        String d = n + " members " + (mixed ? "(mixed subscriptions)" : "(uniform)") + " on " + racks
            + " (half on az-a), " + nt + " topics " + s.topics.values() + ", random placement RF " + rf;
        if (change.equals("fresh")) {
            s.description = d + "; first assignment";
            return s;
        }
        Strategy prior = i % 2 == 0 ? Strategy.COOP : Strategy.STICKY;
        if (change.equals("rack-unaware-prior")) {
            LinkedHashMap<String, List<List<String>>> saved = s.partitionRacks;
            s.partitionRacks = null;
            Generator.ownPlan(s, Generator.javaPlan(s, prior), 4);
            s.partitionRacks = saved;
            s.description = d + "; previous ownership = Java " + prior.wire + " rack-unaware plan at generation 4";
        } else {
            Generator.ownPlan(s, Generator.javaPlan(s, prior), 4);
            for (int k = 0; k < 5; k++) {
                Member m = Generator.add(s, String.format("member-new-%d", k), mixed ? subset(topics) : topics);
                m.rack = racks.get(k % 3);
            }
            for (Member m : s.members) if (rnd.nextInt(10) == 0) m.rack = racks.get(rnd.nextInt(3));
            s.description = d + "; previous ownership = Java " + prior.wire + " plan at generation 4; 5 joined, "
                + "about a tenth changed rack";
        }
        return s;
    }

    // ------------------------------------------------------------ the large set (java-parity-racks-large/)

    /** Groups in the large set: beyond the Rust assignors' Java floor (256 members), their heuristics alone. */
    static final int LARGE_SET_COUNT = 40;
    private static final long LARGE_SET_SEED = 0x6c617267L; // "larg"
    private static final List<Integer> BIG = List.of(0, 12, 33);
    private static final String[] LARGE_CHANGES = {"fresh", "join", "leave", "rack-change", "join-and-leave"};
    private static final String[] LARGE_PLACEMENTS = {"rotate", "random", "unbalanced", "mixed-rf"};
    private static final String[] LARGE_MEMBER_RACKS = {"round-robin", "unbalanced", "some-without", "some-foreign"};

    /**
     * The large rack-aware set: 257-1000 members over 2-4 racks, RF 1-3, 1,000-20,000 partitions in total,
     * uniform and mixed subscriptions, first assignments and reassignments after joins, leaves and rack changes.
     * Each group from its own seed, like {@link #generate()}'s.
     */
    List<Scenario> largeSet() {
        List<Scenario> out = new ArrayList<>();
        for (int i = 0; i < LARGE_SET_COUNT; i++) {
            rnd = new Random(splitMix(LARGE_SET_SEED + i));
            out.add(largeGroup(i));
        }
        for (Scenario s : out) for (Member m : s.members) m.canonicalize();
        return out;
    }

    /**
     * Scrambles consecutive seeds: java.util.Random's first draws of seeds that differ by one are close (its
     * first nextInt(4) was the same for every group), SplitMix64's finalizer spreads them.
     */
    private static long splitMix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /**
     * Change and subscription kind cycle with i (5 changes x uniform/mixed), the rack count with i / 10 (2, 3, 4,
     * 2); placement, member racks, RF, size and topics come from the seed. Groups 0, 12 and 33 (uniform) have
     * 10,000-20,000 partitions, the others 1,000-3,000.
     */
    private Scenario largeGroup(int i) {
        String change = LARGE_CHANGES[i % LARGE_CHANGES.length];
        boolean mixed = (i / LARGE_CHANGES.length) % 2 == 1;
        int nRacks = 2 + (i / 10) % 3;
        List<String> racks = new ArrayList<>();
        for (int r = 0; r < nRacks; r++) racks.add(i % 2 == 0 ? "r" + r : "az-" + (char) ('a' + r));
        String placement = LARGE_PLACEMENTS[rnd.nextInt(LARGE_PLACEMENTS.length)];
        String memberRacks = LARGE_MEMBER_RACKS[rnd.nextInt(LARGE_MEMBER_RACKS.length)];
        int rf = 1 + rnd.nextInt(Math.min(3, nRacks));
        // Sizes lean to the low end (u squared), to keep the files (about 1 KB per member and 100 bytes per
        // partition) and the runs small: members after the change 257-1000, partitions 1,000-3,000, except three
        // uniform groups (a first assignment, a leave, a rack change) with 10,000-20,000.
        double u = rnd.nextDouble();
        int n = 257 + (int) (743 * u * u);
        double v = rnd.nextDouble();
        int total = BIG.contains(i) ? 10_000 + rnd.nextInt(10_001) : 1_000 + (int) (2_000 * v * v);
        int nt = 1 + rnd.nextInt(24);
        int[] weight = new int[nt];
        int sum = 0;
        for (int t = 0; t < nt; t++) sum += weight[t] = 1 + rnd.nextInt(4);
        int[] count = new int[nt];
        count[0] = total;
        for (int t = 1; t < nt; t++) count[0] -= count[t] = Math.max(1, total * weight[t] / sum);
        String name = String.format("%s-%s-%s-%s-%d", change, placement, memberRacks, mixed ? "mixed" : "uniform", i);
        Scenario s = new Scenario(name, "");
        for (int t = 0; t < nt; t++) s.topics.put("topic" + t, count[t]);
        List<String> topics = new ArrayList<>(s.topics.keySet());
        place(s, topics, racks, rf, placement);

        int joined = change.equals("join") ? 1 + rnd.nextInt(20) : change.equals("join-and-leave") ? 1 + rnd.nextInt(10) : 0;
        int leaving = change.equals("leave") ? 1 + rnd.nextInt(n / 10) : change.equals("join-and-leave") ? joined : 0;
        int before = n - joined + leaving;
        List<String> ids = ids(before + joined);
        addMembers(s, ids, before, topics, mixed, racks, memberRacks);
        StringBuilder d = new StringBuilder();
        d.append(n).append(mixed ? " members (mixed subscriptions)" : " members (uniform)")
            .append(", member racks ").append(memberRacks).append(", partition racks ").append(placement)
            .append(" over ").append(racks).append(" (RF ").append(rf).append("), ").append(total)
            .append(" partitions in ").append(nt).append(" topics");
        if (change.equals("fresh")) {
            s.description = d.append("; first assignment").toString();
            return s;
        }
        Strategy prior = PRIOR[rnd.nextInt(PRIOR.length)];
        int gen = 1 + rnd.nextInt(12);
        Generator.ownPlan(s, Generator.javaPlan(s, prior), gen);
        d.append("; previous ownership = Java ").append(prior.wire).append(" plan of ").append(before)
            .append(" members at generation ").append(gen);
        for (int k = 0; k < leaving; k++) s.members.remove(rnd.nextInt(s.members.size()));
        for (int k = 0; k < joined; k++) {
            Member m = Generator.add(s, ids.get(before + k), mixed ? subset(topics) : topics);
            m.rack = memberRack(before + k, racks, memberRacks);
        }
        if (leaving > 0) d.append("; ").append(leaving).append(" left");
        if (joined > 0) d.append("; ").append(joined).append(" joined");
        if (change.equals("rack-change")) {
            // A fifth of the members moved to another rack, lost their rack or gained one.
            int c = 0;
            for (Member m : s.members) {
                if (rnd.nextInt(5) != 0) continue;
                int pick = rnd.nextInt(nRacks + 1);
                m.rack = pick == nRacks ? null : racks.get(pick);
                c++;
            }
            d.append("; ").append(c).append(" members changed rack");
        }
        s.description = d.toString();
        return s;
    }

    /** Replica racks per partition, after the placement mode. */
    private void place(Scenario s, List<String> topics, List<String> racks, int rf, String placement) {
        if (s.partitionRacks == null) s.partitionRacks = new LinkedHashMap<>();
        int nr = racks.size();
        List<String> fixedSet = new ArrayList<>(racks.subList(0, Math.max(1, Math.min(rf, nr - 1))));
        for (String t : topics) {
            List<List<String>> l = new ArrayList<>();
            for (int p = 0; p < s.topics.get(t); p++) {
                List<String> r = new ArrayList<>();
                switch (placement) {
                    case "rotate":
                        for (int j = 0; j < rf; j++) r.add(racks.get((p + j) % nr));
                        break;
                    case "random": {
                        List<String> sh = new ArrayList<>(racks);
                        Collections.shuffle(sh, rnd);
                        r.addAll(sh.subList(0, rf));
                        break;
                    }
                    case "unbalanced": {
                        // The first rack holds most replicas (leaders), the others few.
                        List<String> rest = new ArrayList<>(racks);
                        if (rnd.nextInt(4) != 0) r.add(rest.remove(0));
                        Collections.shuffle(rest, rnd);
                        for (String x : rest) if (r.size() < rf) r.add(x);
                        break;
                    }
                    case "one-rack-set":
                        // Every partition on the same racks (Java then turns rack logic off), unless a member
                        // is on a rack outside the set: still the same set everywhere.
                        r.addAll(racks.subList(0, rf));
                        break;
                    case "one-rack":
                        // All replicas on a strict subset of the racks: members elsewhere can never match.
                        r.addAll(fixedSet.subList(0, Math.min(fixedSet.size(), 1 + rnd.nextInt(fixedSet.size()))));
                        break;
                    default: { // mixed-rf: each partition 1..rf replicas on random racks
                        List<String> sh = new ArrayList<>(racks);
                        Collections.shuffle(sh, rnd);
                        r.addAll(sh.subList(0, 1 + rnd.nextInt(rf)));
                    }
                }
                l.add(r);
            }
            s.partitionRacks.put(t, l);
        }
    }

    private String memberRack(int k, List<String> racks, String mode) {
        int nr = racks.size();
        switch (mode) {
            case "round-robin":
                return racks.get(k % nr);
            case "unbalanced":
                return rnd.nextInt(3) != 0 ? racks.get(0) : racks.get(rnd.nextInt(nr));
            case "some-without":
                return rnd.nextInt(3) == 0 ? null : racks.get(rnd.nextInt(nr));
            case "some-foreign":
                return rnd.nextInt(4) == 0 ? "elsewhere" : racks.get(rnd.nextInt(nr));
            default: // all-one-rack
                return racks.get(nr - 1);
        }
    }

    private List<String> subset(List<String> all) {
        List<String> l = new ArrayList<>();
        for (String t : all) if (rnd.nextBoolean()) l.add(t);
        if (l.isEmpty()) l.add(all.get(rnd.nextInt(all.size())));
        return l;
    }

    private List<String> ids(int n) {
        List<String> l = new ArrayList<>();
        int style = rnd.nextInt(3);
        for (int i = 0; i < n; i++) {
            switch (style) {
                case 0: l.add("c" + (i + 1)); break;
                case 1: l.add(String.format("consumer-%02d", i)); break;
                default: l.add(String.format("m%04x%d", rnd.nextInt(1 << 16), i)); break;
            }
        }
        return l;
    }
}
