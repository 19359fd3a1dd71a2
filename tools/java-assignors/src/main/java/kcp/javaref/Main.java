package kcp.javaref;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.AppInfoParser;

import kcp.javaref.Model.Member;
import kcp.javaref.Model.Scenario;
import kcp.javaref.Model.StickyUD;
import kcp.javaref.Runner.CoopRounds;
import kcp.javaref.Runner.MapKind;
import kcp.javaref.Runner.Outcome;
import kcp.javaref.Runner.Strategy;

public final class Main {
    private Main() {}

    public static void main(String[] args) throws Exception {
        if (args.length >= 1 && args[0].equals("generate")) {
            generate(Paths.get(args.length > 1 ? args[1] : "testdata/assignor/java-parity"), new Generator().generate());
        } else if (args.length >= 1 && args[0].equals("generate-racks")) {
            generate(Paths.get(args.length > 1 ? args[1] : "testdata/assignor/java-parity-racks"), new RackGenerator().generate());
        } else if (args.length >= 1 && args[0].equals("generate-racks-large")) {
            generate(Paths.get(args.length > 1 ? args[1] : "testdata/assignor/java-parity-racks-large"),
                new RackGenerator().largeSet());
        } else if (args.length >= 1 && args[0].equals("generate-stale")) {
            generate(Paths.get(args.length > 1 ? args[1] : "testdata/assignor/java-stale-claims"),
                new Generator().generateStale());
        } else if (args.length >= 1 && args[0].equals("bench")) {
            Bench.main(java.util.Arrays.copyOfRange(args, 1, args.length));
        } else {
            System.err.println("usage: Main generate OUTDIR | Main generate-racks OUTDIR | Main generate-racks-large OUTDIR | Main generate-stale OUTDIR | Main bench [options]");
            System.exit(2);
        }
    }

    static void generate(Path dir, List<Scenario> scenarios) throws IOException {
        String version = AppInfoParser.getVersion();
        Files.createDirectories(dir);
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "[0-9][0-9][0-9]-*.json")) {
            for (Path p : ds) Files.delete(p);
        }
        int n = 0, dependent = 0;
        for (Scenario s : scenarios) {
            n++;
            Map<String, Object> doc = scenarioJson(s, version);
            if (Boolean.TRUE.equals(doc.get("java_hashmap_order_dependent"))) dependent++;
            String file = String.format("%03d-%s.json", n, s.name);
            Files.write(dir.resolve(file), Json.write(doc).getBytes(StandardCharsets.UTF_8));
        }
        System.err.println("wrote " + n + " scenarios to " + dir + " (" + dependent + " marked java_hashmap_order_dependent)");
    }

    static Map<String, Object> scenarioJson(Scenario s, String version) {
        Map<String, Object> doc = Json.obj();
        doc.put("name", s.name);
        doc.put("description", s.description);
        doc.put("input", Model.inputJson(s));
        Map<String, Object> java = Json.obj();
        java.put("kafka_clients_version", version);
        Map<String, Object> dependence = Json.obj();
        for (Strategy st : Strategy.values()) {
            Map<String, Object> r = Json.obj();
            if (st == Strategy.STICKY || st == Strategy.COOP) {
                Map<String, Object> ud = Json.obj();
                for (Member m : s.members) ud.put(m.memberId, Model.hex(Runner.userData(m, st)));
                r.put("user_data", ud);
            }
            Map<String, Object> dep;
            if (st == Strategy.COOP) {
                CoopRounds rounds = Runner.coopRounds(s, MapKind.HASH);
                r.putAll(asMap(rounds.rounds.get(0).json()));
                List<Object> rl = Json.arr();
                for (int i = 0; i < rounds.rounds.size(); i++) {
                    Map<String, Object> ro = Json.obj();
                    ro.put("generation_id", rounds.generations.get(i));
                    ro.putAll(asMap(rounds.rounds.get(i).json()));
                    rl.add(ro);
                }
                r.put("rounds", rl);
                r.put("follow_up_rounds", rounds.rounds.size() - 1);
                r.put("converged", rounds.converged);
                dep = coopOrderDependent(s, rounds);
            } else {
                Outcome o = Runner.run(s, st, MapKind.HASH);
                r.putAll(asMap(o.json()));
                dep = orderDependent(s, st, o);
            }
            java.put(st.wire, r);
            dependence.put(st.wire, dep);
        }
        java.put("hashmap_order_dependent", dependence);
        doc.put("java", java);
        boolean any = false;
        for (Object v : dependence.values()) any |= Boolean.TRUE.equals(asMap(v).get("assignment"));
        doc.put("java_hashmap_order_dependent", any);
        return doc;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asMap(Object o) {
        return (Map<String, Object>) o;
    }

    // ------------------------------------------------------------ HashMap-order probe
    // Java's sticky assignors iterate HashMaps keyed by member id / TopicPartition, so their output can depend on
    // String.hashCode() bucket order. We probe: the same scenario with (1) every member id prefixed (same sort order,
    // different hashes), (2) every topic prefixed, (3) the leader's subscription map iterated in reverse input order.
    // If any probe's result, mapped back to the original names, differs, the scenario is marked order dependent.

    static final class Variant {
        final Scenario scenario;
        final MapKind kind;
        final UnaryOperator<String> memberBack;
        final UnaryOperator<String> topicBack;

        Variant(Scenario scenario, MapKind kind, UnaryOperator<String> memberBack, UnaryOperator<String> topicBack) {
            this.scenario = scenario;
            this.kind = kind;
            this.memberBack = memberBack;
            this.topicBack = topicBack;
        }
    }

    static List<Variant> variants(Scenario s) {
        UnaryOperator<String> id = x -> x;
        List<Variant> l = new ArrayList<>();
        // Renamings that keep Java's String order (so every sorted step sees the same order) but change hashes:
        // a common prefix, and suffixes of U+0001 (below every character our names use; a suffix multiplies hash
        // differences by 31^k, so it reshuffles HashMap buckets more than a prefix does).
        String[][] renames = {{"zz-", ""}, {"", "\u0001"}, {"", "\u0001\u0001\u0001"}};
        boolean rawSticky = s.members.stream().anyMatch(m -> m.sticky != null && m.sticky.raw != null);
        for (String[] r : renames) {
            UnaryOperator<String> fwd = x -> r[0] + x + r[1];
            UnaryOperator<String> back = x -> x.startsWith(r[0]) && x.endsWith(r[1])
                ? x.substring(r[0].length(), x.length() - r[1].length()) : x;
            l.add(new Variant(renameMembers(s, fwd), MapKind.HASH, back, id));
            if (!rawSticky) l.add(new Variant(renameTopics(s, fwd), MapKind.HASH, id, back));
        }
        l.add(new Variant(s, MapKind.REVERSED_LINKED, id, id));
        return l;
    }

    /** Result with names mapped back; `sorted` compares partition sets, otherwise exact list order. */
    static String signature(Outcome o, Variant v, boolean sorted) {
        if (o.error != null) return "error:" + o.error.split(":")[0];
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, List<TopicPartition>> e : o.assignments.entrySet()) {
            sb.append(v.memberBack.apply(e.getKey())).append('=');
            List<String> l = new ArrayList<>();
            for (TopicPartition tp : e.getValue()) l.add(v.topicBack.apply(tp.topic()) + "-" + tp.partition());
            if (sorted) java.util.Collections.sort(l);
            sb.append(String.join(",", l)).append(';');
        }
        return sb.toString();
    }

    static final Variant IDENTITY = new Variant(null, MapKind.HASH, x -> x, x -> x);

    /** {"assignment": sets of partitions differ under some probe, "partition_order": only list order differs}. */
    static Map<String, Object> dependence(boolean sets, boolean order) {
        Map<String, Object> m = Json.obj();
        m.put("assignment", sets);
        m.put("partition_order", !sets && order);
        return m;
    }

    static Map<String, Object> orderDependent(Scenario s, Strategy st, Outcome base) {
        boolean sets = false, order = false;
        for (Variant v : variants(s)) {
            Outcome o = Runner.run(v.scenario, st, v.kind);
            sets |= !signature(o, v, true).equals(signature(base, IDENTITY, true));
            order |= !signature(o, v, false).equals(signature(base, IDENTITY, false));
        }
        return dependence(sets, order);
    }

    static String roundsSignature(CoopRounds r, Variant v, boolean sorted) {
        StringBuilder sb = new StringBuilder();
        for (Outcome o : r.rounds) sb.append(signature(o, v, sorted)).append('|');
        return sb.toString();
    }

    static Map<String, Object> coopOrderDependent(Scenario s, CoopRounds base) {
        boolean sets = false, order = false;
        for (Variant v : variants(s)) {
            CoopRounds r = Runner.coopRounds(v.scenario, v.kind);
            sets |= !roundsSignature(r, v, true).equals(roundsSignature(base, IDENTITY, true));
            order |= !roundsSignature(r, v, false).equals(roundsSignature(base, IDENTITY, false));
        }
        return dependence(sets, order);
    }

    static Scenario shell(Scenario s) {
        Scenario c = new Scenario(s.name, s.description);
        c.topics.putAll(s.topics);
        c.partitionRacks = s.partitionRacks;
        return c;
    }

    static Scenario renameMembers(Scenario s, UnaryOperator<String> f) {
        Scenario c = shell(s);
        for (Member m : s.members) {
            Member n = m.copy();
            n.memberId = f.apply(m.memberId);
            c.members.add(n);
        }
        return c;
    }

    static Scenario renameTopics(Scenario s, UnaryOperator<String> f) {
        Scenario c = new Scenario(s.name, s.description);
        s.topics.forEach((t, n) -> c.topics.put(f.apply(t), n));
        if (s.partitionRacks != null) {
            c.partitionRacks = new LinkedHashMap<>();
            s.partitionRacks.forEach((t, r) -> c.partitionRacks.put(f.apply(t), r));
        }
        for (Member m : s.members) {
            Member n = m.copy();
            n.topics = new ArrayList<>();
            for (String t : m.topics) n.topics.add(f.apply(t));
            n.owned = new ArrayList<>();
            for (TopicPartition tp : m.owned) n.owned.add(new TopicPartition(f.apply(tp.topic()), tp.partition()));
            if (m.sticky != null && m.sticky.raw == null) {
                List<TopicPartition> prev = new ArrayList<>();
                for (TopicPartition tp : m.sticky.prev) prev.add(new TopicPartition(f.apply(tp.topic()), tp.partition()));
                n.sticky = new StickyUD(prev, m.sticky.gen, null);
            }
            c.members.add(n);
        }
        return c;
    }
}
