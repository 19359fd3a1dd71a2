package kcp.javaref;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.AppInfoParser;

import kcp.javaref.Runner.Strategy;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;

/**
 * Timing harness for Java's assign(Cluster, GroupSubscription) on the shapes (a plain warm-up + measure
 * loop, not JMH). Subscriptions are rebuilt outside the timed region before every call (StickyAssignor consumes
 * the user-data buffer it reads).
 *
 *   A  500 topics x 2,000 partitions (1,000,000), 2,000 members, uniform subscription
 *   B  as A, but the last member subscribes only to the first topic (general path of the sticky assignors)
 *   C  100 topics x 200 partitions (20,000), 500 members; every 4th member on the first 50 topics, others on the last 50
 * and the rack shapes of benches/assignors.rs (testkit's with_racks(shape, 3, 2): member i on rack{i % 3}, partition p
 * of every topic with replicas on rack{p % 3} and rack{(p + 1) % 3}, one broker per rack; member ids zero-padded to
 * the width of the member count, consumer0000.., as ours), so Java's rack-aware paths run:
 *   java-rack-uniform-100k-2000     50 topics x 2,000 partitions, 2,000 members, uniform
 *   java-rack-nonequal-100k-2000    as the uniform one, the last member on topic0 only
 *   java-rack-mixed-halves-10k-500  50 topics x 200 partitions, 500 members, every 4th on topics 0-24, others on 25-49
 *   java-rack-mixed-halves-20k-250  50 topics x 400 partitions, 250 members, the same halves (a group the Rust
 *                                   leader also runs its model of this assignor on: the floor, up to 256 members)
 * phases: first  (nobody owns anything)
 *         reassign (every member owns what the same assignor gave it in `first`, generation 1; member 0 is new)
 */
final class Bench {
    private Bench() {}

    static final class Shape {
        final String name;
        final String description;
        final Map<String, Integer> topics = new java.util.LinkedHashMap<>();
        final List<String> memberIds = new ArrayList<>();
        final Map<String, List<String>> subscriptions = new HashMap<>();
        /** Rack of each member, or null for the shapes without racks. */
        Map<String, String> memberRacks = null;
        /** Racks and replication factor of the partitions (0 = no replica information). */
        int racks = 0;
        int replication = 0;

        Shape(String name, String description) {
            this.name = name;
            this.description = description;
        }
    }

    static Shape shape(String name) {
        List<String> topics = new ArrayList<>();
        Shape s;
        switch (name) {
            case "A":
            case "B": {
                s = new Shape(name, name.equals("A") ? "500 topics x 2000 partitions, 2000 members, uniform"
                    : "500 topics x 2000 partitions, 2000 members, last member subscribes to topic0 only");
                for (int t = 0; t < 500; t++) {
                    topics.add("topic" + t);
                    s.topics.put("topic" + t, 2000);
                }
                for (int i = 0; i < 2000; i++) {
                    String id = "consumer" + i;
                    s.memberIds.add(id);
                    s.subscriptions.put(id, name.equals("B") && i == 1999 ? topics.subList(0, 1) : topics);
                }
                return s;
            }
            case "C": {
                s = new Shape(name, "100 topics x 200 partitions, 500 members, every 4th member on topics 0-49, others on 50-99");
                for (int t = 0; t < 100; t++) {
                    topics.add("topic" + t);
                    s.topics.put("topic" + t, 200);
                }
                for (int i = 0; i < 500; i++) {
                    String id = "consumer" + i;
                    s.memberIds.add(id);
                    s.subscriptions.put(id, i % 4 == 0 ? topics.subList(0, 50) : topics.subList(50, 100));
                }
                return s;
            }
            case "java-rack-uniform-100k-2000":
            case "java-rack-nonequal-100k-2000": {
                boolean nonequal = name.equals("java-rack-nonequal-100k-2000");
                s = new Shape(name, "50 topics x 2000 partitions, 2000 members"
                    + (nonequal ? ", last member subscribes to topic0 only" : ", uniform")
                    + "; 3 racks, member i on rack{i % 3}, partition p on rack{p % 3} and rack{(p + 1) % 3}");
                for (int t = 0; t < 50; t++) {
                    topics.add("topic" + t);
                    s.topics.put("topic" + t, 2000);
                }
                for (int i = 0; i < 2000; i++) {
                    String id = String.format("consumer%04d", i);
                    s.memberIds.add(id);
                    s.subscriptions.put(id, nonequal && i == 1999 ? topics.subList(0, 1) : topics);
                }
                return withRacks(s, 3, 2);
            }
            case "java-rack-mixed-halves-20k-250":
                return rackHalves(name, 400, 250);
            case "java-rack-mixed-halves-10k-500":
                return rackHalves(name, 200, 500);
            default:
                throw new IllegalArgumentException("unknown shape " + name);
        }
    }

    /** testkit's with_racks(halves(50, partitions, members), 3, 2): every 4th member on topics 0-24, the others on 25-49. */
    static Shape rackHalves(String name, int partitions, int members) {
        Shape s = new Shape(name, "50 topics x " + partitions + " partitions, " + members
            + " members, every 4th member on topics 0-24, others on 25-49"
            + "; 3 racks, member i on rack{i % 3}, partition p on rack{p % 3} and rack{(p + 1) % 3}");
        List<String> topics = new ArrayList<>();
        for (int t = 0; t < 50; t++) {
            topics.add("topic" + t);
            s.topics.put("topic" + t, partitions);
        }
        for (int i = 0; i < members; i++) {
            String id = String.format("consumer%03d", i);
            s.memberIds.add(id);
            s.subscriptions.put(id, i % 4 == 0 ? topics.subList(0, 25) : topics.subList(25, 50));
        }
        return withRacks(s, 3, 2);
    }

    /** testkit's with_racks: member i on rack{i % racks}; partition p's replicas on racks p, p + 1, ... (mod racks). */
    static Shape withRacks(Shape s, int racks, int replication) {
        s.racks = racks;
        s.replication = replication;
        s.memberRacks = new HashMap<>();
        for (int i = 0; i < s.memberIds.size(); i++) s.memberRacks.put(s.memberIds.get(i), "rack" + (i % racks));
        return s;
    }

    static Cluster cluster(Shape s) {
        List<PartitionInfo> parts = new ArrayList<>();
        Node[] none = new Node[0];
        // One broker per rack; a partition's leader is its first replica.
        List<Node> nodes = new ArrayList<>();
        for (int r = 0; r < s.racks; r++) nodes.add(new Node(r, "broker-rack" + r, 9092, "rack" + r));
        s.topics.forEach((t, n) -> {
            for (int p = 0; p < n; p++) {
                if (s.racks == 0) {
                    parts.add(new PartitionInfo(t, p, null, none, none));
                    continue;
                }
                Node[] replicas = new Node[s.replication];
                for (int j = 0; j < s.replication; j++) replicas[j] = nodes.get((p + j) % s.racks);
                parts.add(new PartitionInfo(t, p, replicas[0], replicas, replicas));
            }
        });
        return new Cluster("bench", nodes, parts, Collections.emptySet(), Collections.emptySet());
    }

    /** Per member: (owned, userData) for the reassign phase, or null for the first phase. */
    static Map<String, Subscription> subscriptions(Shape s, Strategy st, Map<String, List<TopicPartition>> prev,
                                                  Map<String, byte[]> userData) {
        Map<String, Subscription> m = new HashMap<>();
        for (String id : s.memberIds) {
            List<TopicPartition> owned = prev == null || id.equals(s.memberIds.get(0))
                ? Collections.emptyList() : prev.getOrDefault(id, Collections.emptyList());
            boolean isNew = prev == null || id.equals(s.memberIds.get(0));
            byte[] ud = userData.get(id);
            Subscription sub = new Subscription(s.subscriptions.get(id), ud == null ? null : ByteBuffer.wrap(ud),
                owned, isNew ? -1 : 1, Optional.ofNullable(s.memberRacks == null ? null : s.memberRacks.get(id)));
            // --decoded: what a leader really holds, each member's subscription deserialized from its
            // JoinGroup metadata (its own topic strings), instead of lists sharing one set of strings.
            m.put(id, decoded ? ConsumerProtocol.deserializeSubscription(ConsumerProtocol.serializeSubscription(sub)) : sub);
        }
        return m;
    }

    static Map<String, byte[]> userData(Shape s, Strategy st, Map<String, List<TopicPartition>> prev) {
        Map<String, byte[]> out = new HashMap<>();
        for (String id : s.memberIds) {
            boolean isNew = prev == null || id.equals(s.memberIds.get(0));
            ConsumerGroupMetadata md = new ConsumerGroupMetadata("bench", 1, id, Optional.empty());
            if (st == Strategy.STICKY) {
                if (isNew) continue;
                StickyAssignor a = new StickyAssignor();
                a.onAssignment(new Assignment(prev.getOrDefault(id, Collections.emptyList())), md);
                out.put(id, Runner.bytes(a.subscriptionUserData(new HashSet<>(s.subscriptions.get(id)))));
            } else if (st == Strategy.COOP) {
                CooperativeStickyAssignor a = new CooperativeStickyAssignor();
                if (!isNew) a.onAssignment(new Assignment(Collections.emptyList()), md);
                out.put(id, Runner.bytes(a.subscriptionUserData(new HashSet<>(s.subscriptions.get(id)))));
            }
        }
        return out;
    }

    /** Partitions assigned to a member whose rack holds one of their replicas (racks p, p + 1, ... mod racks). */
    static int rackMatched(Shape s, Map<String, List<TopicPartition>> result) {
        int matched = 0;
        for (Map.Entry<String, List<TopicPartition>> e : result.entrySet()) {
            int rack = Integer.parseInt(s.memberRacks.get(e.getKey()).substring("rack".length()));
            for (TopicPartition tp : e.getValue()) {
                if (Math.floorMod(rack - tp.partition(), s.racks) < s.replication) matched++;
            }
        }
        return matched;
    }

    static List<MemoryPoolMXBean> heapPools() {
        List<MemoryPoolMXBean> l = new ArrayList<>();
        for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) if (p.getType() == MemoryType.HEAP) l.add(p);
        return l;
    }

    static long usedHeap() {
        Runtime r = Runtime.getRuntime();
        return r.totalMemory() - r.freeMemory();
    }

    static final com.sun.management.OperatingSystemMXBean OS =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    static final class Sample {
        double ms;
        double cpuMs;       // process CPU (all threads: GC, JIT included)
        double threadCpuMs; // CPU of the thread running assign()
        long peakBytes;
        Map<String, List<TopicPartition>> result;
    }

    static Sample once(ConsumerPartitionAssignor assignor, Cluster cluster, Map<String, Subscription> subs) {
        for (MemoryPoolMXBean p : heapPools()) p.resetPeakUsage();
        long c0 = OS.getProcessCpuTime();
        long tc0 = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        GroupAssignment ga = assignor.assign(cluster, new GroupSubscription(subs));
        long t1 = System.nanoTime();
        long tc1 = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
        long c1 = OS.getProcessCpuTime();
        long peak = 0;
        for (MemoryPoolMXBean p : heapPools()) peak += p.getPeakUsage().getUsed();
        Sample s = new Sample();
        s.ms = (t1 - t0) / 1e6;
        s.cpuMs = (c1 - c0) / 1e6;
        s.threadCpuMs = (tc1 - tc0) / 1e6;
        s.peakBytes = peak;
        s.result = new HashMap<>();
        for (Map.Entry<String, Assignment> e : ga.groupAssignment().entrySet()) s.result.put(e.getKey(), e.getValue().partitions());
        return s;
    }

    /** Set by --decoded. */
    static boolean decoded = false;

    public static void main(String[] args) throws Exception {
        List<String> shapes = Arrays.asList("A", "B", "C");
        List<String> assignors = Arrays.asList("range", "roundrobin", "sticky", "cooperative-sticky");
        List<String> phases = Arrays.asList("first", "reassign");
        int warmup = 1, iters = 3;
        double budgetS = 60;
        String outFile = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--shapes": shapes = Arrays.asList(args[++i].split(",")); break;
                case "--assignors": assignors = Arrays.asList(args[++i].split(",")); break;
                case "--phases": phases = Arrays.asList(args[++i].split(",")); break;
                case "--warmup": warmup = Integer.parseInt(args[++i]); break;
                case "--iters": iters = Integer.parseInt(args[++i]); break;
                case "--budget-s": budgetS = Double.parseDouble(args[++i]); break;
                case "--out": outFile = args[++i]; break;
                case "--decoded": decoded = true; break;
                default: throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        Map<String, Object> doc = Json.obj();
        doc.put("tool", "tools/java-assignors Bench (warm-up + measured loop, System.nanoTime around assign())");
        doc.put("kafka_clients_version", AppInfoParser.getVersion());
        doc.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        doc.put("available_processors", Runtime.getRuntime().availableProcessors());
        doc.put("max_heap_mb", (int) (Runtime.getRuntime().maxMemory() >> 20));
        doc.put("warmup", warmup);
        doc.put("iterations", iters);
        doc.put("subscriptions", decoded ? "decoded: each member's own strings (ConsumerProtocol round trip)"
            : "shared: members' topic lists share one set of String objects (as Kafka's own large tests)");
        doc.put("budget_s_per_case", (int) budgetS);
        doc.put("notes", "ms_* = wall clock around assign(); process_cpu = all JVM threads (GC, JIT) during the call; "
            + "peak_heap_mb = sum of the heap pools' peak usage during the call after resetPeakUsage() (approximate: G1 "
            + "reports eden usage lazily), heap_before_op_mb = used heap after System.gc() with the inputs built. "
            + "The machine is shared with other jobs: wall figures are noisy, CPU figures less so.");
        List<Object> results = Json.arr();
        doc.put("results", results);
        for (String shapeName : shapes) {
            Shape shape = shape(shapeName);
            Cluster cluster = cluster(shape);
            int partitions = shape.topics.values().stream().mapToInt(Integer::intValue).sum();
            for (String an : assignors) {
                Strategy st = Arrays.stream(Strategy.values()).filter(x -> x.wire.equals(an)).findFirst().orElseThrow();
                Map<String, List<TopicPartition>> firstResult = null;
                for (String phase : phases) {
                    Map<String, List<TopicPartition>> prev = null;
                    if (phase.equals("reassign")) {
                        if (firstResult == null) {
                            Map<String, Subscription> subs = subscriptions(shape, st, null, userData(shape, st, null));
                            firstResult = once(st.newAssignor(), cluster, subs).result;
                        }
                        prev = firstResult;
                    }
                    Map<String, byte[]> ud = userData(shape, st, prev);
                    List<Double> times = new ArrayList<>();
                    List<Double> cpu = new ArrayList<>();
                    List<Double> threadCpu = new ArrayList<>();
                    long peak = 0;
                    long baseline = 0;
                    int assigned = 0;
                    Map<String, List<TopicPartition>> lastResult = null;
                    int done = 0;
                    long start = System.nanoTime();
                    for (int i = 0; i < warmup + iters; i++) {
                        Map<String, Subscription> subs = subscriptions(shape, st, prev, ud);
                        System.gc();
                        baseline = usedHeap();
                        Sample smp = once(st.newAssignor(), cluster, subs);
                        if (phase.equals("first") && firstResult == null) firstResult = smp.result;
                        assigned = smp.result.values().stream().mapToInt(List::size).sum();
                        lastResult = smp.result;
                        System.err.printf("%s %s %-18s %s %.1f ms (process cpu %.1f ms)%n", shapeName, phase, an,
                            i < warmup ? "warmup" : "iter  ", smp.ms, smp.cpuMs);
                        if (i >= warmup) {
                            times.add(smp.ms);
                            cpu.add(smp.cpuMs);
                            threadCpu.add(smp.threadCpuMs);
                            peak = Math.max(peak, smp.peakBytes);
                            done++;
                        }
                        double elapsed = (System.nanoTime() - start) / 1e9;
                        // a slow case: stop warming up / measuring once the budget is spent (at least one measured run)
                        if (elapsed > budgetS && done >= 1) break;
                        if (i < warmup && elapsed > budgetS / 2) i = warmup - 1;
                    }
                    Map<String, Object> r = Json.obj();
                    r.put("shape", shapeName);
                    r.put("shape_description", shape.description);
                    r.put("phase", phase);
                    r.put("assignor", an);
                    r.put("partitions", partitions);
                    r.put("members", shape.memberIds.size());
                    r.put("measured_runs", done);
                    double mean = times.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
                    r.put("ms_per_op", mean);
                    r.put("ms_min", times.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN));
                    r.put("ms_max", times.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN));
                    r.put("process_cpu_ms_per_op", cpu.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN));
                    r.put("thread_cpu_ms_per_op", threadCpu.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN));
                    r.put("heap_before_op_mb", (int) (baseline >> 20));
                    r.put("peak_heap_mb", (int) (peak >> 20));
                    r.put("partitions_assigned", assigned);
                    if (shape.memberRacks != null) r.put("rack_matched_partitions", rackMatched(shape, lastResult));
                    results.add(r);
                }
            }
        }
        String json = Json.write(doc);
        if (outFile != null) Files.write(Paths.get(outFile), json.getBytes(StandardCharsets.UTF_8));
        System.out.print(json);
    }
}
