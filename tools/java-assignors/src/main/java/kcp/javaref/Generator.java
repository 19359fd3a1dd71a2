package kcp.javaref;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.apache.kafka.common.TopicPartition;

import kcp.javaref.Model.CoopUD;
import kcp.javaref.Model.Member;
import kcp.javaref.Model.Scenario;
import kcp.javaref.Model.StickyUD;
import kcp.javaref.Runner.MapKind;
import kcp.javaref.Runner.Strategy;

/** Deterministic scenario set: every random choice comes from java.util.Random seeded per scenario. */
final class Generator {
    private final List<Scenario> out = new ArrayList<>();
    private Random rnd;
    private static final long BASE_SEED = 0x6b6370L; // "kcp"

    private Scenario sc(String name, String description) {
        Scenario s = new Scenario(name, description);
        out.add(s);
        rnd = new Random(BASE_SEED * 1_000_003L + out.size());
        return s;
    }

    // ---------------------------------------------------------------- helpers

    static Member fresh(String id, List<String> topics) {
        Member m = new Member(id);
        m.topics = new ArrayList<>(topics);
        m.generation = -1;
        m.sticky = null;             // a StickyAssignor that never got an assignment sends no user data
        m.coop = CoopUD.gen(-1);     // a CooperativeStickyAssignor always sends its generation (-1 when new)
        return m;
    }

    static Member add(Scenario s, String id, String... topics) {
        Member m = fresh(id, Arrays.asList(topics));
        s.members.add(m);
        return m;
    }

    static Member add(Scenario s, String id, List<String> topics) {
        Member m = fresh(id, topics);
        s.members.add(m);
        return m;
    }

    /** The member owned `prev` in generation `gen`, and both sticky assignors remember it. */
    static void own(Member m, List<TopicPartition> prev, int gen) {
        m.owned = new ArrayList<>(prev);
        m.generation = gen;
        m.sticky = StickyUD.v1(prev, gen);
        m.coop = CoopUD.gen(gen);
    }

    static TopicPartition tp(String t, int p) {
        return new TopicPartition(t, p);
    }

    static List<TopicPartition> tps(Object... topicThenPartitions) {
        List<TopicPartition> l = new ArrayList<>();
        String t = null;
        for (Object o : topicThenPartitions) {
            if (o instanceof String) t = (String) o;
            else l.add(tp(t, (Integer) o));
        }
        return l;
    }

    static List<String> topicNames(String prefix, int n) {
        List<String> l = new ArrayList<>();
        for (int i = 0; i < n; i++) l.add(prefix + i);
        return l;
    }

    private String randomHex(int n) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) sb.append(Character.forDigit(rnd.nextInt(16), 16));
        return sb.toString();
    }

    /** Member ids in several styles; style 2 looks like real Java client ids (client id + UUID). */
    private List<String> ids(int style, int n) {
        List<String> l = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            switch (style % 4) {
                case 0: l.add("c" + (i + 1)); break;                       // c1, c10, c2 ... (string order != numeric)
                case 1: l.add(String.format("consumer-%02d", i)); break;
                case 2: l.add("consumer-app-" + (i + 1) + "-" + randomHex(8) + "-" + randomHex(4) + "-" + randomHex(4)
                    + "-" + randomHex(4) + "-" + randomHex(12)); break;
                default: l.add(randomHex(6)); break;
            }
        }
        return l;
    }

    private List<String> randomSubset(List<String> all) {
        List<String> l = new ArrayList<>();
        for (String t : all) if (rnd.nextBoolean()) l.add(t);
        if (l.isEmpty()) l.add(all.get(rnd.nextInt(all.size())));
        return l;
    }

    static List<TopicPartition> allPartitions(Scenario s) {
        List<TopicPartition> l = new ArrayList<>();
        s.topics.forEach((t, n) -> {
            for (int p = 0; p < n; p++) l.add(tp(t, p));
        });
        return l;
    }

    /** What Java's assignor gives this group (the converged final round for cooperative-sticky). */
    static Map<String, List<TopicPartition>> javaPlan(Scenario s, Strategy st) {
        Runner.Outcome o;
        if (st == Strategy.COOP) {
            Runner.CoopRounds r = Runner.coopRounds(s, MapKind.HASH, Runner.PLAN_COOP_ROUNDS);
            o = r.rounds.get(r.rounds.size() - 1);
        } else {
            o = Runner.run(s, st, MapKind.HASH);
        }
        if (o.error != null) throw new IllegalStateException("prior plan failed: " + o.error);
        return o.assignments;
    }

    /** Sets every member's ownership to `plan` at generation `gen` (members absent from the plan stay fresh). */
    static void ownPlan(Scenario s, Map<String, List<TopicPartition>> plan, int gen) {
        for (Member m : s.members) {
            List<TopicPartition> l = plan.get(m.memberId);
            if (l != null) own(m, l, gen);
        }
    }

    private void racksFor(Scenario s, String topic, List<String> racks, int rf, boolean random) {
        if (s.partitionRacks == null) s.partitionRacks = new LinkedHashMap<>();
        List<List<String>> l = new ArrayList<>();
        for (int p = 0; p < s.topics.get(topic); p++) {
            List<String> r = new ArrayList<>();
            if (random) {
                List<String> sh = new ArrayList<>(racks);
                Collections.shuffle(sh, rnd);
                r.addAll(sh.subList(0, Math.min(rf, sh.size())));
            } else {
                for (int j = 0; j < rf && j < racks.size(); j++) r.add(racks.get((p + j) % racks.size()));
            }
            l.add(r);
        }
        s.partitionRacks.put(topic, l);
    }

    private static final Strategy[] PRIOR = {Strategy.RANGE, Strategy.ROUNDROBIN, Strategy.STICKY, Strategy.COOP};

    // ---------------------------------------------------------------- families

    List<Scenario> generate() {
        uniformFresh();
        mixedFresh();
        uniformRebalance();
        mixedRebalance();
        generations();
        staleClaims();
        duplicateClaims();
        topicShrunk();
        missingTopics();
        staticMembers();
        racks();
        empty();
        userData();
        unicode();
        large();
        for (Scenario s : out) for (Member m : s.members) m.canonicalize();
        return out;
    }

    /**
     * The stale-claim hand-over set (issue 27, testdata/assignor/java-stale-claims/): a member at an older
     * generation claims partitions a member at the group's current generation owns. Java's assignors take such a
     * claim for no ownership: the valid owner keeps the partition and nothing is withheld from it.
     */
    List<Scenario> generateStale() {
        Scenario s = sc("smallest", "4 partitions: c1 (generation 10) owns 0,1; c2 (generation 9) claims 0,1,2; c3 new");
        s.topics.put("topic", 4);
        own(add(s, "c1", "topic"), tps("topic", 0, 1), 10);
        own(add(s, "c2", "topic"), tps("topic", 0, 1, 2), 9);
        add(s, "c3", "topic");

        s = sc("two-stale-claimers", "6 partitions: c1 (generation 10) owns 0,1,2; c2 (9) claims 0,1,3; c3 (8) claims "
            + "1,2,4; c4 new");
        s.topics.put("topic", 6);
        own(add(s, "c1", "topic"), tps("topic", 0, 1, 2), 10);
        own(add(s, "c2", "topic"), tps("topic", 0, 1, 3), 9);
        own(add(s, "c3", "topic"), tps("topic", 1, 2, 4), 8);
        add(s, "c4", "topic");

        s = sc("three-generations-same-partitions", "4 partitions: c1 (generation 5), c2 (4) and c3 (3) all claim 0,1; "
            + "c4 new");
        s.topics.put("topic", 4);
        own(add(s, "c1", "topic"), tps("topic", 0, 1), 5);
        own(add(s, "c2", "topic"), tps("topic", 0, 1), 4);
        own(add(s, "c3", "topic"), tps("topic", 0, 1), 3);
        add(s, "c4", "topic");

        s = sc("stale-claimer-listed-first", "the smallest case with the stale claimer listed (and ranked) first: "
            + "a1 (generation 9) claims 0,1,2; b1 (generation 10) owns 0,1; c1 new");
        s.topics.put("topic", 4);
        own(add(s, "a1", "topic"), tps("topic", 0, 1, 2), 9);
        own(add(s, "b1", "topic"), tps("topic", 0, 1), 10);
        add(s, "c1", "topic");

        s = sc("stale-claim-over-everything", "40 partitions: c1 (generation 10) owns 0-13, c2 (10) owns 14-27, c3 "
            + "(generation 9) claims all 40; c4 new");
        s.topics.put("topic", 40);
        List<TopicPartition> all = allPartitions(s);
        own(add(s, "c1", "topic"), all.subList(0, 14), 10);
        own(add(s, "c2", "topic"), all.subList(14, 28), 10);
        own(add(s, "c3", "topic"), all, 9);
        add(s, "c4", "topic");

        s = sc("stale-claim-mixed-subscriptions", "a has 6 partitions, b 4: c1 (generation 7, a+b) owns a0-2,b0-1; "
            + "c2 (6, a) claims a0-5; c3 (7, b) owns b2,b3; c4 new (a+b) (general path)");
        s.topics.put("a", 6);
        s.topics.put("b", 4);
        own(add(s, "c1", "a", "b"), tps("a", 0, 1, 2, "b", 0, 1), 7);
        own(add(s, "c2", "a"), tps("a", 0, 1, 2, 3, 4, 5), 6);
        own(add(s, "c3", "b"), tps("b", 2, 3), 7);
        add(s, "c4", "a", "b");

        // Seeded: the group's plan at generation g over everyone; then one or two members drop out and the rest
        // own the plan without them at g + 1; the dropped ones rejoin claiming their old partitions at g (or g - 1).
        for (int i = 0; i < 8; i++) {
            boolean mixed = i % 2 == 1;
            s = sc("kicked-" + i, "");
            int n = 5 + rnd.nextInt(6);
            for (String t : topicNames("topic", 2 + rnd.nextInt(2))) s.topics.put(t, 8 + rnd.nextInt(40));
            List<String> topics = new ArrayList<>(s.topics.keySet());
            for (String id : ids(i, n)) add(s, id, mixed ? randomSubset(topics) : topics);
            int g = 3 + rnd.nextInt(5);
            Map<String, List<TopicPartition>> old = javaPlan(s, Strategy.COOP);
            int k = 1 + i % 2;
            List<Member> kicked = new ArrayList<>();
            for (int j = 0; j < k; j++) kicked.add(s.members.remove(rnd.nextInt(s.members.size())));
            ownPlan(s, javaPlan(s, Strategy.COOP), g + 1);
            StringBuilder d = new StringBuilder();
            for (int j = 0; j < k; j++) {
                Member m = kicked.get(j);
                own(m, old.get(m.memberId), g - j);
                s.members.add(rnd.nextInt(s.members.size() + 1), m);
                d.append(j == 0 ? "" : ", ").append(m.memberId).append(" at generation ").append(g - j);
            }
            s.description = n + " members (" + (mixed ? "mixed" : "uniform") + "); the others own the generation "
                + (g + 1) + " plan; stale claimers of the generation " + g + " plan: " + d;
        }
        for (Scenario x : out) for (Member m : x.members) m.canonicalize();
        return out;
    }

    private void uniformFresh() {
        int[] members = {1, 2, 3, 4, 5, 6, 7, 8, 10, 12};
        for (int i = 0; i < 30; i++) {
            Scenario s = sc("uniform-fresh-" + i, "");
            int nm = members[i % members.length];
            int nt = 1 + rnd.nextInt(5);
            for (String t : topicNames("topic", nt)) s.topics.put(t, 1 + rnd.nextInt(i < 10 ? 6 : 24));
            List<String> topics = new ArrayList<>(s.topics.keySet());
            for (String id : ids(i, nm)) add(s, id, topics);
            s.description = nm + " members, " + nt + " topics " + s.topics.values()
                + ", uniform subscription, no previous ownership (first assignment)";
        }
    }

    private void mixedFresh() {
        // fixed shapes from the Java assignors' own documentation / tests
        Scenario s = sc("mixed-fresh-roundrobin-javadoc", "RoundRobinAssignor javadoc example: C0 [t0], C1 [t0,t1], C2 [t0,t1,t2]");
        s.topics.put("t0", 1); s.topics.put("t1", 2); s.topics.put("t2", 3);
        add(s, "C0", "t0"); add(s, "C1", "t0", "t1"); add(s, "C2", "t0", "t1", "t2");

        s = sc("mixed-fresh-three-consumers", "c1 [topic1], c2 [topic1, topic2], c3 [topic1]; topic1 3 partitions, topic2 2");
        s.topics.put("topic1", 3); s.topics.put("topic2", 2);
        add(s, "consumer1", "topic1"); add(s, "consumer2", "topic1", "topic2"); add(s, "consumer3", "topic1");

        s = sc("mixed-fresh-poor-roundrobin", "5 topics (1..5 partitions), staircase subscriptions where round robin is poor");
        for (int i = 1; i <= 5; i++) s.topics.put("topic" + i, i);
        add(s, "consumer1", "topic1", "topic2", "topic3", "topic4", "topic5");
        add(s, "consumer2", "topic1", "topic3", "topic5");
        add(s, "consumer3", "topic1", "topic3", "topic5");
        add(s, "consumer4", "topic1", "topic2", "topic3", "topic4", "topic5");

        s = sc("mixed-fresh-staircase", "8 topics with i+1 partitions; consumer i subscribes to topics 0..i");
        for (int i = 0; i < 8; i++) s.topics.put("topic" + i, i + 1);
        for (int i = 0; i < 8; i++) add(s, "c" + i, topicNames("topic", i + 1));

        for (int i = 0; i < 26; i++) {
            s = sc("mixed-fresh-" + i, "");
            int nm = 2 + rnd.nextInt(9);
            int nt = 2 + rnd.nextInt(6);
            for (String t : topicNames("t", nt)) s.topics.put(t, 1 + rnd.nextInt(12));
            List<String> topics = new ArrayList<>(s.topics.keySet());
            for (String id : ids(i, nm)) add(s, id, randomSubset(topics));
            s.description = nm + " members, " + nt + " topics " + s.topics.values()
                + ", random subscriptions, no previous ownership";
        }
    }

    private void uniformRebalance() {
        String[] changes = {"join", "leave", "join-and-leave", "partitions-added", "imbalanced-prior"};
        for (int i = 0; i < 30; i++) {
            String change = changes[i % changes.length];
            Strategy prior = PRIOR[(i / changes.length) % PRIOR.length];
            Scenario s = sc("uniform-rebalance-" + change + "-" + i, "");
            int nPrev = 2 + rnd.nextInt(6);
            int nt = 1 + rnd.nextInt(4);
            for (String t : topicNames("topic", nt)) s.topics.put(t, 2 + rnd.nextInt(16));
            List<String> topics = new ArrayList<>(s.topics.keySet());
            List<String> idl = ids(i, nPrev + 3);
            for (int k = 0; k < nPrev; k++) add(s, idl.get(k), topics);
            int gen = 1 + rnd.nextInt(30);
            String how;
            if (change.equals("imbalanced-prior")) {
                // ownership that no assignor would produce: random owners, some partitions unowned
                Map<String, List<TopicPartition>> plan = new LinkedHashMap<>();
                for (Member m : s.members) plan.put(m.memberId, new ArrayList<>());
                for (TopicPartition tp : allPartitions(s)) {
                    if (rnd.nextInt(6) == 0) continue;
                    int k = rnd.nextInt(3) == 0 ? 0 : rnd.nextInt(nPrev);
                    plan.get(idl.get(k)).add(tp);
                }
                ownPlan(s, plan, gen);
                how = "random skewed previous ownership (some partitions unowned)";
            } else {
                ownPlan(s, javaPlan(s, prior), gen);
                how = "previous ownership = Java " + prior.wire + " plan of the previous group";
            }
            int joined = 0, left = 0;
            if (change.contains("leave")) {
                left = 1 + rnd.nextInt(Math.max(1, nPrev / 2));
                for (int k = 0; k < left; k++) s.members.remove(rnd.nextInt(s.members.size()));
            }
            if (change.contains("join")) {
                joined = 1 + rnd.nextInt(3);
                for (int k = 0; k < joined; k++) add(s, idl.get(nPrev + k), topics);
            }
            if (change.equals("partitions-added")) {
                for (String t : topics) s.topics.put(t, s.topics.get(t) + rnd.nextInt(6));
            }
            s.description = nPrev + " previous members at generation " + gen + ", " + how + "; change: " + change
                + (joined > 0 ? " (" + joined + " joined)" : "") + (left > 0 ? " (" + left + " left)" : "")
                + "; topics " + s.topics;
        }
    }

    private void mixedRebalance() {
        String[] changes = {"join", "leave", "unsubscribe", "subscribe-new-topic", "reshuffle-subscriptions"};
        for (int i = 0; i < 25; i++) {
            String change = changes[i % changes.length];
            Strategy prior = PRIOR[(i / changes.length) % PRIOR.length];
            Scenario s = sc("mixed-rebalance-" + change + "-" + i, "");
            int nPrev = 3 + rnd.nextInt(6);
            int nt = 2 + rnd.nextInt(5);
            for (String t : topicNames("t", nt)) s.topics.put(t, 1 + rnd.nextInt(10));
            List<String> topics = new ArrayList<>(s.topics.keySet());
            List<String> idl = ids(i + 1, nPrev + 3);
            for (int k = 0; k < nPrev; k++) add(s, idl.get(k), randomSubset(topics));
            int gen = 1 + rnd.nextInt(20);
            ownPlan(s, javaPlan(s, prior), gen);
            switch (change) {
                case "join":
                    for (int k = 0; k < 2; k++) add(s, idl.get(nPrev + k), randomSubset(topics));
                    break;
                case "leave":
                    s.members.remove(rnd.nextInt(s.members.size()));
                    break;
                case "unsubscribe": {
                    // a member drops a topic it still owns partitions of (they stay in owned_partitions)
                    for (Member m : s.members) {
                        if (m.topics.size() > 1 && !m.owned.isEmpty()) {
                            String drop = m.owned.get(0).topic();
                            m.topics.remove(drop);
                            if (m.topics.isEmpty()) m.topics.add(topics.get(0).equals(drop) ? topics.get(1) : topics.get(0));
                            break;
                        }
                    }
                    break;
                }
                case "subscribe-new-topic": {
                    s.topics.put("t-new", 1 + rnd.nextInt(8));
                    for (Member m : s.members) if (rnd.nextBoolean()) m.topics.add("t-new");
                    break;
                }
                default:
                    for (Member m : s.members) m.topics = randomSubset(topics);
            }
            s.description = nPrev + " previous members (random subscriptions) at generation " + gen
                + ", previous ownership = Java " + prior.wire + " plan; change: " + change + "; topics " + s.topics;
        }
    }

    private void generations() {
        for (int i = 0; i < 15; i++) {
            Scenario s = sc("generations-" + i, "");
            boolean mixed = i % 2 == 1;
            int n = 3 + rnd.nextInt(4);
            for (String t : topicNames("topic", 2 + rnd.nextInt(2))) s.topics.put(t, 3 + rnd.nextInt(8));
            List<String> topics = new ArrayList<>(s.topics.keySet());
            for (String id : ids(i, n)) add(s, id, mixed ? randomSubset(topics) : topics);
            int gen = 2 + rnd.nextInt(10);
            ownPlan(s, javaPlan(s, PRIOR[i % 4]), gen);
            StringBuilder d = new StringBuilder(n + " members, " + (mixed ? "mixed" : "uniform")
                + " subscriptions, Java " + PRIOR[i % 4].wire + " prior plan at generation " + gen + "; ");
            for (Member m : s.members) {
                switch (rnd.nextInt(6)) {
                    case 0: // generation absent on the wire, v1-style: generation only in cooperative user data
                        m.generation = -1;
                        d.append(m.memberId).append(": generation field absent, coop user data ").append(gen).append("; ");
                        break;
                    case 1: // generation absent everywhere (cooperative user data says -1)
                        m.generation = -1;
                        m.coop = CoopUD.gen(-1);
                        m.sticky = StickyUD.v1(m.owned, -1);
                        d.append(m.memberId).append(": generation -1 everywhere with ownership; ");
                        break;
                    case 2: // older generation than the others, same ownership (no conflict)
                        m.generation = gen - 1;
                        m.coop = CoopUD.gen(gen - 1);
                        m.sticky = StickyUD.v1(m.owned, gen - 1);
                        d.append(m.memberId).append(": generation ").append(gen - 1).append("; ");
                        break;
                    case 3: // no cooperative user data at all (non-Java client), generation field absent
                        m.generation = -1;
                        m.coop = null;
                        d.append(m.memberId).append(": generation field absent, no user data; ");
                        break;
                    default:
                        break;
                }
            }
            s.description = d.toString().trim();
        }
    }

    private void staleClaims() {
        // all six permutations of three claimers of topic-2 with generations 1/2/3, plus a member on topic1 only
        int[][] perms = {{1, 2, 3}, {1, 3, 2}, {2, 1, 3}, {2, 3, 1}, {3, 1, 2}, {3, 2, 1}};
        for (int[] g : perms) {
            Scenario s = sc("stale-claims-three-generations-" + g[0] + g[1] + g[2],
                "topic has 3 partitions, topic1 has 3; c1/c2/c3 (topic) claim topic-0/1/2 plus all three claim topic-2 "
                    + "with generations " + Arrays.toString(g) + "; c4 on topic1 only (general path)");
            s.topics.put("topic", 3);
            s.topics.put("topic1", 3);
            for (int k = 0; k < 3; k++) {
                Member m = add(s, "consumer" + (k + 1), "topic");
                List<TopicPartition> o = new ArrayList<>(tps("topic", k));
                if (k != 2) o.add(tp("topic", 2));
                own(m, o, g[k]);
            }
            add(s, "consumer4", "topic1");
        }
        Scenario s = sc("stale-claims-highest-generation-wins",
            "3 consumers, generations 10/9/8 with overlapping claims over topic, topic2, topic3 (3 partitions each)");
        for (String t : new String[] {"topic", "topic2", "topic3"}) s.topics.put(t, 3);
        own(add(s, "consumer1", "topic", "topic2", "topic3"), tps("topic", 0, "topic2", 0, "topic3", 0), 10);
        own(add(s, "consumer2", "topic", "topic2", "topic3"), tps("topic", 0, 1, "topic2", 1, "topic3", 1), 9);
        own(add(s, "consumer3", "topic", "topic2", "topic3"), tps("topic", 2, "topic2", 0, 1, 2, "topic3", 1, 2), 8);

        s = sc("stale-claims-new-member-and-three-generations",
            "new member (generation -1) plus members at generations 9/8/7 claiming overlapping partitions");
        for (String t : new String[] {"topic1", "topic2", "topic3"}) s.topics.put(t, 3);
        List<String> all = new ArrayList<>(s.topics.keySet());
        own(add(s, "consumer1", all), tps("topic1", 0, "topic2", 0, "topic3", 0), 9);
        own(add(s, "consumer2", all), tps("topic1", 0, 1, "topic2", 1, "topic3", 1), 8);
        own(add(s, "consumer3", all), tps("topic1", 1, 2, "topic2", 2, "topic3", 2), 7);
        add(s, "consumer4", all);

        s = sc("stale-claims-generation-10-vs-9", "c1 (gen 10) and c2 (gen 9) both claim topic-0,1; c3 new; 4 partitions");
        s.topics.put("topic", 4);
        own(add(s, "consumer1", "topic"), tps("topic", 0, 1), 10);
        own(add(s, "consumer2", "topic"), tps("topic", 0, 1, 2), 9);
        add(s, "consumer3", "topic");

        s = sc("stale-claims-generation-10-vs-absent", "c1 (gen 10) and c2 (generation absent) both claim topic-0,1");
        s.topics.put("topic", 4);
        own(add(s, "consumer1", "topic"), tps("topic", 0, 1), 10);
        Member m = add(s, "consumer2", "topic");
        own(m, tps("topic", 0, 1, 2), -1);
        m.coop = CoopUD.gen(-1);
        add(s, "consumer3", "topic");

        s = sc("stale-claims-sticky-field-vs-userdata",
            "StickyAssignor quirk: c2's generation field (5) is lower than its sticky user data generation (7); "
                + "c1 at generation 6 claims the same partitions");
        s.topics.put("topic", 6);
        own(add(s, "c1", "topic"), tps("topic", 0, 1, 2), 6);
        m = add(s, "c2", "topic");
        own(m, tps("topic", 1, 2, 3, 4), 5);
        m.sticky = StickyUD.v1(tps("topic", 1, 2, 3, 4), 7);
        add(s, "c3", "topic");

        for (int i = 0; i < 4; i++) {
            s = sc("stale-claims-kicked-member-" + i, "");
            boolean mixed = i % 2 == 1;
            int n = 4 + rnd.nextInt(3);
            for (String t : topicNames("topic", 2)) s.topics.put(t, 4 + rnd.nextInt(8));
            List<String> topics = new ArrayList<>(s.topics.keySet());
            List<String> idl = ids(i, n);
            for (String id : idl) add(s, id, mixed ? randomSubset(topics) : topics);
            // generation g: plan over all n; generation g+1: plan without member 0, which keeps its stale claims
            int g = 3 + rnd.nextInt(5);
            Map<String, List<TopicPartition>> old = javaPlan(s, Strategy.COOP);
            Member kicked = s.members.remove(0);
            ownPlan(s, javaPlan(s, Strategy.COOP), g + 1);
            own(kicked, old.get(kicked.memberId), g);
            s.members.add(rnd.nextInt(s.members.size() + 1), kicked);
            s.description = n + " members (" + (mixed ? "mixed" : "uniform") + "), " + kicked.memberId
                + " was kicked out at generation " + g + " and rejoins claiming its old partitions; the others own the "
                + "generation " + (g + 1) + " plan";
        }
    }

    private void duplicateClaims() {
        Scenario s = sc("duplicate-claims-equal-partitions",
            "3 partitions: c1 [0,1] and c2 [0,2] in the same generation 1; c3 new (KAFKA-12984)");
        s.topics.put("topic", 3);
        own(add(s, "consumer1", "topic"), tps("topic", 0, 1), 1);
        own(add(s, "consumer2", "topic"), tps("topic", 0, 2), 1);
        add(s, "consumer3", "topic");

        s = sc("duplicate-claims-unequal-partitions", "4 partitions: c1 [0,1,3] and c2 [0,2] in generation 1; c3 new");
        s.topics.put("topic", 4);
        own(add(s, "consumer1", "topic"), tps("topic", 0, 1, 3), 1);
        own(add(s, "consumer2", "topic"), tps("topic", 0, 2), 1);
        add(s, "consumer3", "topic");

        s = sc("duplicate-claims-all-same", "three members of generation 4 all claim every partition of topic (5)");
        s.topics.put("topic", 5);
        for (String id : new String[] {"a", "b", "c"}) own(add(s, id, "topic"), tps("topic", 0, 1, 2, 3, 4), 4);

        for (int i = 0; i < 9; i++) {
            s = sc("duplicate-claims-random-" + i, "");
            boolean mixed = i % 3 == 2;
            int n = 3 + rnd.nextInt(5);
            for (String t : topicNames("t", 1 + rnd.nextInt(3))) s.topics.put(t, 3 + rnd.nextInt(10));
            List<String> topics = new ArrayList<>(s.topics.keySet());
            for (String id : ids(i, n)) add(s, id, mixed ? randomSubset(topics) : topics);
            int gen = 1 + rnd.nextInt(9);
            ownPlan(s, javaPlan(s, PRIOR[i % 4]), gen);
            int dups = 0;
            for (Member m : s.members) {
                for (Member o : s.members) {
                    if (o == m || o.owned.isEmpty() || rnd.nextInt(3) != 0) continue;
                    TopicPartition t = o.owned.get(rnd.nextInt(o.owned.size()));
                    if (m.topics.contains(t.topic()) && !m.owned.contains(t)) {
                        List<TopicPartition> l = new ArrayList<>(m.owned);
                        l.add(t);
                        own(m, l, gen);
                        dups++;
                    }
                }
            }
            s.description = n + " members (" + (mixed ? "mixed" : "uniform") + "), Java " + PRIOR[i % 4].wire
                + " plan at generation " + gen + " plus " + dups + " extra claims of other members' partitions in the same generation";
        }
    }

    private void topicShrunk() {
        for (int i = 0; i < 12; i++) {
            Scenario s = sc("topic-shrunk-" + i, "");
            boolean mixed = i % 3 == 2;
            int n = 2 + rnd.nextInt(5);
            for (String t : topicNames("topic", 1 + rnd.nextInt(3))) s.topics.put(t, 4 + rnd.nextInt(10));
            List<String> topics = new ArrayList<>(s.topics.keySet());
            for (String id : ids(i, n)) add(s, id, mixed ? randomSubset(topics) : topics);
            int gen = 1 + rnd.nextInt(9);
            ownPlan(s, javaPlan(s, PRIOR[i % 4]), gen);
            String shrunk = topics.get(rnd.nextInt(topics.size()));
            int before = s.topics.get(shrunk);
            int after = i % 4 == 3 ? 1 : 1 + rnd.nextInt(before - 1);
            s.topics.put(shrunk, after);
            if (i % 5 == 4) add(s, "joiner", topics);
            s.description = n + " members (" + (mixed ? "mixed" : "uniform") + "), Java " + PRIOR[i % 4].wire
                + " plan at generation " + gen + "; then " + shrunk + " was re-created with " + after + " partitions (was "
                + before + "): owned claims of partitions >= " + after + " remain (KAFKA-21674: Java may double-assign)"
                + (i % 5 == 4 ? "; a new member joins" : "");
        }
    }

    private void missingTopics() {
        Scenario s = sc("missing-topics-subscribed-topic-absent", "c1,c2 subscribe to topic1 (3) and topic2, which has no metadata");
        s.topics.put("topic1", 3);
        add(s, "c1", "topic1", "topic2"); add(s, "c2", "topic1", "topic2");

        s = sc("missing-topics-zero-partitions", "topic2 is listed with 0 partitions");
        s.topics.put("topic1", 4); s.topics.put("topic2", 0);
        add(s, "c1", "topic1", "topic2"); add(s, "c2", "topic2");

        s = sc("missing-topics-only-topic-deleted", "the only subscribed topic is missing from metadata (no topics at all)");
        add(s, "consumer", "topic");

        s = sc("missing-topics-owned-of-deleted-topic", "c1 owns partitions of topic2 which is now deleted but still subscribed");
        s.topics.put("topic1", 4);
        own(add(s, "c1", "topic1", "topic2"), tps("topic1", 0, 1, "topic2", 0, 1, 2), 3);
        own(add(s, "c2", "topic1", "topic2"), tps("topic1", 2, 3, "topic2", 3), 3);

        s = sc("missing-topics-owned-unsubscribed-deleted", "owned partitions of a deleted topic nobody subscribes to any more");
        s.topics.put("topic1", 4);
        own(add(s, "c1", "topic1"), tps("old", 0, 1, "topic1", 0, 1), 2);
        own(add(s, "c2", "topic1"), tps("old", 2, "topic1", 2, 3), 2);
        add(s, "c3", "topic1");

        s = sc("missing-topics-one-of-mixed", "mixed subscriptions where one member's only topic is missing");
        s.topics.put("a", 5); s.topics.put("b", 2);
        add(s, "m1", "a", "b"); add(s, "m2", "ghost"); add(s, "m3", "b", "ghost");

        s = sc("missing-topics-big-and-missing", "topic1 (1 partition) and topic2 (100 partitions) subscribed; topic3 missing");
        s.topics.put("topic1", 1); s.topics.put("topic2", 100);
        add(s, "consumer1", "topic1", "topic2", "topic3");

        for (int i = 0; i < 3; i++) {
            s = sc("missing-topics-random-" + i, "");
            int n = 3 + rnd.nextInt(4);
            for (String t : topicNames("t", 4)) s.topics.put(t, 2 + rnd.nextInt(6));
            List<String> topics = new ArrayList<>(s.topics.keySet());
            for (String id : ids(i, n)) add(s, id, randomSubset(topics));
            int gen = 1 + rnd.nextInt(5);
            ownPlan(s, javaPlan(s, PRIOR[i + 1]), gen);
            String gone = topics.get(rnd.nextInt(topics.size()));
            s.topics.remove(gone);
            s.description = n + " members (mixed), Java " + PRIOR[i + 1].wire + " plan at generation " + gen
                + "; then topic " + gone + " was deleted (still subscribed and owned)";
        }
    }

    private void staticMembers() {
        Scenario s = sc("static-two-consumers-instance-order", "two static members; member ids sort opposite to instance ids");
        s.topics.put("t1", 3); s.topics.put("t2", 3);
        add(s, "consumer-a", "t1", "t2").instanceId = "instance-2";
        add(s, "consumer-b", "t1", "t2").instanceId = "instance-1";

        s = sc("static-one-static-one-dynamic", "static members sort before dynamic ones");
        s.topics.put("t1", 3); s.topics.put("t2", 3);
        add(s, "consumer-a", "t1", "t2");
        add(s, "consumer-b", "t1", "t2").instanceId = "instance-1";

        s = sc("static-range-persistent", "3 static members and a dynamic one (RangeAssignorTest shape)");
        s.topics.put("topic1", 5); s.topics.put("topic2", 5);
        add(s, "consumer1", "topic1", "topic2").instanceId = "instance1";
        add(s, "consumer2", "topic1", "topic2").instanceId = "instance2";
        add(s, "consumer3", "topic1", "topic2").instanceId = "instance3";
        add(s, "consumer4", "topic1", "topic2");

        s = sc("static-member-ids-changed", "3 static members rejoined with new member ids (reverse order) keeping ownership");
        s.topics.put("topic1", 5); s.topics.put("topic2", 5);
        String[] newIds = {"consumer-z", "consumer-y", "consumer-x"};
        for (int k = 0; k < 3; k++) add(s, newIds[k], "topic1", "topic2").instanceId = "instance" + (k + 1);
        ownPlan(s, javaPlan(s, Strategy.STICKY), 4);

        for (int i = 0; i < 11; i++) {
            s = sc("static-random-" + i, "");
            boolean mixed = i % 3 == 1;
            int n = 3 + rnd.nextInt(6);
            for (String t : topicNames("topic", 1 + rnd.nextInt(3))) s.topics.put(t, 2 + rnd.nextInt(12));
            List<String> topics = new ArrayList<>(s.topics.keySet());
            List<String> idl = ids(2 + i, n); // random-looking ids (style 2/3/0/1)
            List<String> inst = new ArrayList<>();
            for (int k = 0; k < n; k++) inst.add("instance-" + (char) ('a' + k));
            Collections.shuffle(inst, rnd);
            int statics = 0;
            for (int k = 0; k < n; k++) {
                Member m = add(s, idl.get(k), mixed ? randomSubset(topics) : topics);
                if (i % 2 == 0 || rnd.nextBoolean()) {
                    m.instanceId = inst.get(k);
                    statics++;
                }
            }
            String extra = "";
            if (i >= 5) {
                int gen = 1 + rnd.nextInt(8);
                ownPlan(s, javaPlan(s, PRIOR[i % 4]), gen);
                // one static member restarts: same instance id, new member id, keeps its previous ownership
                Member r = null;
                for (Member m : s.members) if (m.instanceId != null) { r = m; break; }
                if (r != null) {
                    String old = r.memberId;
                    r.memberId = "restarted-" + randomHex(6);
                    extra = "; Java " + PRIOR[i % 4].wire + " prior plan at generation " + gen + ", static member "
                        + r.instanceId + " restarted: member id " + old + " -> " + r.memberId;
                }
            }
            s.description = n + " members (" + statics + " static, " + (mixed ? "mixed" : "uniform")
                + "), instance ids shuffled relative to member ids" + extra;
        }
    }

    private void racks() {
        String[][] rackSets = {{"r0", "r1"}, {"r0", "r1", "r2"}, {"az-a", "az-b", "az-c", "az-d"}};
        String[] modes = {"rotate", "random", "all-same", "disjoint", "some-consumers", "some-topics", "empty-string-rack"};
        for (int i = 0; i < 28; i++) {
            String mode = modes[i % modes.length];
            List<String> racks = Arrays.asList(rackSets[i % rackSets.length]);
            int rf = 1 + rnd.nextInt(racks.size());
            boolean mixed = (i / modes.length) % 2 == 1;
            boolean prior = (i / modes.length) >= 2;
            Scenario s = sc("racks-" + mode + "-" + i, "");
            int n = 2 + rnd.nextInt(6);
            for (String t : topicNames("t", 1 + rnd.nextInt(3))) s.topics.put(t, 2 + rnd.nextInt(12));
            List<String> topics = new ArrayList<>(s.topics.keySet());
            List<String> idl = ids(i, n);
            for (int k = 0; k < n; k++) add(s, idl.get(k), mixed ? randomSubset(topics) : topics);
            int gen = 1 + rnd.nextInt(6);
            if (prior) ownPlan(s, javaPlan(s, PRIOR[i % 4]), gen); // plan made without racks: misaligned owners
            for (String t : topics) {
                if (mode.equals("some-topics") && t.equals(topics.get(0)) && topics.size() > 1) continue;
                if (mode.equals("all-same")) racksFor(s, t, racks, racks.size(), false);
                else racksFor(s, t, racks, rf, mode.equals("random"));
            }
            for (int k = 0; k < n; k++) {
                Member m = s.members.get(k);
                switch (mode) {
                    case "disjoint": m.rack = "zone-" + k % 2; break;
                    case "some-consumers": m.rack = k % 2 == 0 ? racks.get(k % racks.size()) : null; break;
                    case "empty-string-rack": m.rack = k % 3 == 0 ? "" : racks.get(k % racks.size()); break;
                    default: m.rack = racks.get(k % racks.size());
                }
            }
            s.description = n + " members (" + (mixed ? "mixed" : "uniform") + ") with client racks, partition racks "
                + mode + " over " + racks + " (replicas per partition: " + (mode.equals("all-same") ? racks.size() : rf) + ")"
                + (prior ? "; Java " + PRIOR[i % 4].wire + " rack-unaware prior plan at generation " + gen : "; first assignment");
        }
        Scenario s = sc("racks-rf1-two-racks-misaligned",
            "RF=1, 2 broker racks; owners hold partitions on the other rack (KAFKA-15170 shape)");
        s.topics.put("topic", 4);
        racksFor(s, "topic", Arrays.asList("rack-a", "rack-b"), 1, false);
        Member a = add(s, "c1", "topic"); a.rack = "rack-a"; own(a, tps("topic", 1, 3), 2);
        Member b = add(s, "c2", "topic"); b.rack = "rack-b"; own(b, tps("topic", 0, 2), 2);

        s = sc("racks-copartitioned-range", "two topics with identical partition counts and subscriptions (range co-partitioning) and racks");
        s.topics.put("t1", 6); s.topics.put("t2", 6); s.topics.put("t3", 3);
        for (String t : s.topics.keySet()) racksFor(s, t, Arrays.asList("r1", "r2", "r3"), 2, false);
        a = add(s, "c1", "t1", "t2", "t3"); a.rack = "r1";
        b = add(s, "c2", "t1", "t2", "t3"); b.rack = "r2";
        Member c = add(s, "c3", "t1", "t2"); c.rack = "r3";
    }

    private void empty() {
        Scenario s = sc("empty-group", "no members at all; topics exist");
        s.topics.put("topic", 3);
        s = sc("empty-group-no-topics", "no members and no topics");
        s = sc("empty-one-member-no-topics", "one member with an empty subscription");
        s.topics.put("topic", 3);
        add(s, "consumer");
        s = sc("empty-metadata", "members subscribe to topics but metadata has no topics");
        add(s, "c1", "a"); add(s, "c2", "a", "b");
        s = sc("empty-all-topics-zero-partitions", "every subscribed topic has 0 partitions");
        s.topics.put("a", 0); s.topics.put("b", 0);
        add(s, "c1", "a", "b"); add(s, "c2", "a", "b");
        s = sc("empty-more-members-than-partitions", "6 members, one topic with 2 partitions");
        s.topics.put("topic", 2);
        for (int k = 1; k <= 6; k++) add(s, "c" + k, "topic");
        s = sc("empty-member-without-topics-in-group", "one member subscribes to nothing, others to topic (5)");
        s.topics.put("topic", 5);
        add(s, "a", "topic"); add(s, "b"); add(s, "c", "topic");
        s = sc("empty-single-partition-owned-by-leaver", "c1 owned the only partition; c2, c3 new; c1 gone");
        s.topics.put("topic", 1);
        add(s, "c2", "topic"); add(s, "c3", "topic");
    }

    private void userData() {
        Scenario s = sc("userdata-sticky-v0", "c1 sends StickyAssignor V0 user data (no generation), c2 V1 at generation 3");
        s.topics.put("topic", 6);
        Member m = add(s, "c1", "topic"); own(m, tps("topic", 0, 1, 2), 3); m.sticky = StickyUD.v0(tps("topic", 0, 1, 2));
        own(add(s, "c2", "topic"), tps("topic", 3, 4, 5), 3);
        add(s, "c3", "topic");

        s = sc("userdata-sticky-v0-conflict", "V0 (no generation) and V1 user data claim the same partitions");
        s.topics.put("topic", 4);
        m = add(s, "c1", "topic"); own(m, tps("topic", 0, 1, 2), 3); m.sticky = StickyUD.v0(tps("topic", 0, 1, 2));
        own(add(s, "c2", "topic"), tps("topic", 1, 2, 3), 3);

        s = sc("userdata-garbage", "c1's user data is 3 garbage bytes for both sticky assignors (decode fails)");
        s.topics.put("topic", 6);
        m = add(s, "c1", "topic"); own(m, tps("topic", 0, 1, 2), 5);
        m.sticky = StickyUD.raw(new byte[] {(byte) 0xde, (byte) 0xad, 0x01});
        m.coop = CoopUD.raw(new byte[] {(byte) 0xde, (byte) 0xad, 0x01});
        own(add(s, "c2", "topic"), tps("topic", 3, 4, 5), 5);

        s = sc("userdata-garbage-no-generation-field", "garbage cooperative user data and no generation field: generation -1 for c1");
        s.topics.put("topic", 6);
        m = add(s, "c1", "topic"); own(m, tps("topic", 0, 1, 2, 3), -1);
        m.coop = CoopUD.raw(new byte[] {0x00, 0x01});
        own(add(s, "c2", "topic"), tps("topic", 3, 4, 5), 2);

        s = sc("userdata-empty-bytes", "c1 sends zero-length user data (not null) for both sticky assignors");
        s.topics.put("topic", 4);
        m = add(s, "c1", "topic"); own(m, tps("topic", 0, 1), 2);
        m.sticky = StickyUD.raw(new byte[0]);
        m.coop = CoopUD.raw(new byte[0]);
        own(add(s, "c2", "topic"), tps("topic", 2, 3), 2);

        s = sc("userdata-eager-realistic", "eager members: owned_partitions fields empty (revoked before rejoin), "
            + "previous assignment only in sticky user data at generation 7");
        s.topics.put("t1", 4); s.topics.put("t2", 4);
        m = add(s, "c1", "t1", "t2"); m.generation = 7; m.sticky = StickyUD.v1(tps("t1", 0, 1, "t2", 0, 1), 7); m.coop = CoopUD.gen(7);
        m = add(s, "c2", "t1", "t2"); m.generation = 7; m.sticky = StickyUD.v1(tps("t1", 2, 3, "t2", 2, 3), 7); m.coop = CoopUD.gen(7);
        add(s, "c3", "t1", "t2");

        s = sc("userdata-inconsistent-field-vs-userdata",
            "owned_partitions field and sticky user data disagree (field: [0,1] gen 2; user data: [2,3] gen 2)");
        s.topics.put("topic", 4);
        m = add(s, "c1", "topic"); own(m, tps("topic", 0, 1), 2); m.sticky = StickyUD.v1(tps("topic", 2, 3), 2);
        add(s, "c2", "topic");

        s = sc("userdata-v1-coop-generation-only", "v1-style cooperative members: no generation field, generation in user data (4 and 3)");
        s.topics.put("topic", 6);
        m = add(s, "c1", "topic"); own(m, tps("topic", 0, 1, 2, 3), -1); m.coop = CoopUD.gen(4);
        m = add(s, "c2", "topic"); own(m, tps("topic", 3, 4, 5), -1); m.coop = CoopUD.gen(3);
        add(s, "c3", "topic");

        s = sc("userdata-sticky-userdata-unknown-partitions", "sticky user data names partitions beyond the topic's count");
        s.topics.put("topic", 3);
        m = add(s, "c1", "topic"); own(m, tps("topic", 0), 2); m.sticky = StickyUD.v1(tps("topic", 0, 5, 7), 2);
        own(add(s, "c2", "topic"), tps("topic", 1, 2), 2);

        s = sc("userdata-sticky-multi-topic-order", "sticky user data over 5 topics (topic order follows Java's HashMap)");
        for (String t : new String[] {"orders", "payments", "audit", "clicks", "zeta"}) s.topics.put(t, 3);
        List<String> all = new ArrayList<>(s.topics.keySet());
        for (String id : new String[] {"m1", "m2", "m3"}) add(s, id, all);
        ownPlan(s, javaPlan(s, Strategy.ROUNDROBIN), 9);
        s.members.remove(1);
        add(s, "m4", all);
    }

    private void unicode() {
        // U+FF5E (one UTF-16 unit, 0xff5e) vs U+1F600 (surrogates 0xd83d 0xde00): Java's String order puts the
        // emoji first, code point / UTF-8 byte order puts it last.
        String a = "m-\uff5e";
        String b = "m-\ud83d\ude00";
        Scenario s = sc("unicode-member-ids-utf16-order", "member ids whose UTF-16 order differs from UTF-8 byte order");
        s.topics.put("topic", 5);
        add(s, a, "topic"); add(s, b, "topic"); add(s, "m-z", "topic");

        s = sc("unicode-instance-ids-utf16-order", "static members whose instance ids sort differently in UTF-16 and UTF-8");
        s.topics.put("t1", 3); s.topics.put("t2", 2);
        add(s, "x", "t1", "t2").instanceId = a;
        add(s, "y", "t1", "t2").instanceId = b;
        add(s, "z", "t1", "t2").instanceId = "inst-\u00e9";

        s = sc("unicode-topic-names", "topic names with non-ASCII characters (sorted by Java String order)");
        s.topics.put("t-\uff5e", 3); s.topics.put("t-\ud83d\ude00", 3); s.topics.put("t-a", 2);
        List<String> all = new ArrayList<>(s.topics.keySet());
        add(s, "c1", all); add(s, "c2", all);

        s = sc("unicode-mixed-with-ownership", "non-ASCII member and topic names with previous ownership");
        s.topics.put("t-\uff5e", 4); s.topics.put("t-\ud83d\ude00", 4);
        all = new ArrayList<>(s.topics.keySet());
        add(s, a, all); add(s, b, all); add(s, "m-0", all.subList(0, 1));
        ownPlan(s, javaPlan(s, Strategy.STICKY), 2);
        add(s, "m-new", all);
    }

    private void large() {
        Scenario s = sc("large-50x2000-uniform-fresh", "50 members, 4 topics x 500 partitions, uniform, first assignment");
        for (String t : topicNames("topic", 4)) s.topics.put(t, 500);
        List<String> all = new ArrayList<>(s.topics.keySet());
        for (int k = 0; k < 50; k++) add(s, "consumer" + k, all);

        s = sc("large-50x2000-uniform-reassign",
            "50 members, 4 x 500 partitions; every member owns its Java sticky plan at generation 1 except consumer0 (new)");
        for (String t : topicNames("topic", 4)) s.topics.put(t, 500);
        for (int k = 0; k < 50; k++) add(s, "consumer" + k, all);
        ownPlan(s, javaPlan(s, Strategy.STICKY), 1);
        s.members.set(0, fresh("consumer0", all));

        s = sc("large-50x2000-nonequal-reassign",
            "like large-50x2000-uniform-reassign but the last member subscribes only to topic0 (general path)");
        for (String t : topicNames("topic", 4)) s.topics.put(t, 500);
        for (int k = 0; k < 50; k++) add(s, "consumer" + k, k == 49 ? all.subList(0, 1) : all);
        ownPlan(s, javaPlan(s, Strategy.STICKY), 1);
        s.members.set(0, fresh("consumer0", all));

        s = sc("large-40x2000-mixed-halves",
            "40 members over 20 topics x 100 partitions; every 4th member on the first half of the topics, others on the second half");
        for (String t : topicNames("topic", 20)) s.topics.put(t, 100);
        all = new ArrayList<>(s.topics.keySet());
        for (int k = 0; k < 40; k++) add(s, "consumer" + k, k % 4 == 0 ? all.subList(0, 10) : all.subList(10, 20));

        s = sc("large-60x1200-racks-reassign", "60 members in 3 racks, 12 topics x 100 partitions RF 2; prior plan without racks");
        for (String t : topicNames("topic", 12)) s.topics.put(t, 100);
        all = new ArrayList<>(s.topics.keySet());
        for (int k = 0; k < 60; k++) add(s, "consumer" + k, all).rack = "rack" + (k % 3);
        ownPlan(s, javaPlan(s, Strategy.RANGE), 5);
        for (String t : all) racksFor(s, t, Arrays.asList("rack0", "rack1", "rack2"), 2, true);

        s = sc("large-100-members-random-subscriptions", "100 members, 30 topics x rand(1..60) partitions, random subscriptions, "
            + "half own a prior Java cooperative-sticky plan, 10 left");
        for (String t : topicNames("topic", 30)) s.topics.put(t, 1 + rnd.nextInt(60));
        all = new ArrayList<>(s.topics.keySet());
        for (int k = 0; k < 100; k++) add(s, String.format("member-%03d", k), randomSubset(all));
        Map<String, List<TopicPartition>> plan = javaPlan(s, Strategy.COOP);
        for (Member m : s.members) if (rnd.nextBoolean()) own(m, plan.get(m.memberId), 3);
        for (int k = 0; k < 10; k++) s.members.remove(rnd.nextInt(s.members.size()));
    }
}
