package kcp.live;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.utils.AppInfoParser;

/**
 * A Java consumer-group member for the live tests: subscribes, calls poll() in a loop (it fetches
 * but ignores records and commits nothing) and prints its rebalance callbacks as JSON lines in the
 * shape of `kcp group join` (../shared/spec/cli.md), so the logs of Java, librdkafka and kcp members
 * can be merged by ts_ms and checked together.
 *
 * <pre>
 * LiveConsumer --bootstrap[-server] HOST:PORT --group G --topics T1,T2 [--assignors cooperative-sticky,range]
 *   [--group-protocol classic|consumer] [--remote-assignor uniform|range] [--instance-id ID]
 *   [--rack R] [--client-id C] [--session-timeout-ms N] [--heartbeat-interval-ms N]
 *   [--duration-s N] [--command-config FILE] [--config KEY=VALUE]... [--process true]
 *   [--revoke-delay-ms N]
 * </pre>
 *
 * Lines: first {"event": "config", ...} (the member's own subscription settings), then "joined"
 * (when the member id or generation changes, before the assignment callback), "revoked",
 * "assigned", "lost", each with "partitions" (what the callback is about) and "owned" (everything
 * the member owns after it); after every assignment a "reported" line with consumer.assignment()
 * and the group metadata the client reports of itself; "error" (then exit 1) and finally "left"
 * after close() returned. SIGTERM and --duration-s both close the consumer (LeaveGroup unless
 * static) and exit 0.
 *
 * --revoke-delay-ms N: onPartitionsRevoked of a non-empty revocation prints "revoked" and then
 * sleeps N ms before it returns, as a member that commits slowly would. A cooperative member
 * rejoins only after that callback, so the group stays in the generation whose assignment
 * withholds those partitions from everyone for N ms (a deterministic hand-over window).
 */
public final class LiveConsumer {
  private static final Map<String, String> ASSIGNORS = Map.of(
      "range", "org.apache.kafka.clients.consumer.RangeAssignor",
      "roundrobin", "org.apache.kafka.clients.consumer.RoundRobinAssignor",
      "sticky", "org.apache.kafka.clients.consumer.StickyAssignor",
      "cooperative-sticky", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");

  private final KafkaConsumer<byte[], byte[]> consumer;
  private final Set<TopicPartition> owned = new HashSet<>();
  private String lastMemberId = null;
  private int lastGeneration = Integer.MIN_VALUE;
  /** --process: print every record ("processed") and commit after each poll and on revocation. */
  private static boolean process = false;
  /** --revoke-delay-ms: how long onPartitionsRevoked of a non-empty revocation sleeps. */
  private static long revokeDelayMs = 0;

  private LiveConsumer(KafkaConsumer<byte[], byte[]> consumer) {
    this.consumer = consumer;
  }

  static void usage(String why) {
    System.err.println("LiveConsumer: " + why);
    System.err.println("usage: LiveConsumer --bootstrap B --group G --topics T1,T2 [--assignors A1,A2]"
        + " [--group-protocol classic|consumer] [--remote-assignor A] [--instance-id ID] [--rack R]"
        + " [--client-id C] [--session-timeout-ms N] [--heartbeat-interval-ms N] [--duration-s N]"
        + " [--command-config FILE] [--config K=V]... [--revoke-delay-ms N]");
    System.exit(2);
  }

  static Properties readProperties(String path) {
    Properties p = new Properties();
    try (InputStream in = new FileInputStream(path)) {
      p.load(in);
    } catch (IOException e) {
      usage("cannot read " + path + ": " + e.getMessage());
    }
    return p;
  }

  public static void main(String[] args) throws Exception {
    String bootstrap = null, group = null, protocol = "classic", remoteAssignor = null;
    String instanceId = null, rack = null, clientId = null, commandConfig = null;
    List<String> topics = new ArrayList<>(), assignors = new ArrayList<>();
    Integer sessionMs = null, heartbeatMs = null;
    long durationS = 600;
    Properties extra = new Properties();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (i + 1 >= args.length) usage(a + " needs a value");
      String v = args[++i];
      switch (a) {
        case "--bootstrap":
        case "--bootstrap-server": bootstrap = v; break;
        case "--group": group = v; break;
        case "--topics": topics = Arrays.asList(v.split(",")); break;
        case "--assignors": assignors = Arrays.asList(v.split(",")); break;
        case "--group-protocol": protocol = v; break;
        case "--remote-assignor": remoteAssignor = v; break;
        case "--instance-id": instanceId = v; break;
        case "--rack": rack = v; break;
        case "--client-id": clientId = v; break;
        case "--session-timeout-ms": sessionMs = Integer.parseInt(v); break;
        case "--heartbeat-interval-ms": heartbeatMs = Integer.parseInt(v); break;
        case "--duration-s": durationS = Long.parseLong(v); break;
        case "--command-config": commandConfig = v; break;
        case "--process": process = Boolean.parseBoolean(v); break;
        case "--revoke-delay-ms": revokeDelayMs = Long.parseLong(v); break;
        case "--config": {
          int eq = v.indexOf('=');
          if (eq <= 0) usage("--config wants KEY=VALUE");
          extra.setProperty(v.substring(0, eq), v.substring(eq + 1));
          break;
        }
        default: usage("unknown option " + a);
      }
    }
    if (bootstrap == null || group == null || topics.isEmpty()) usage("--bootstrap, --group and --topics are required");
    if (!protocol.equals("classic") && !protocol.equals("consumer")) usage("--group-protocol: classic or consumer");
    boolean consumerProtocol = protocol.equals("consumer");
    // Java's consumer-protocol member refuses the classic-only settings: say so before it does.
    if (consumerProtocol && (!assignors.isEmpty() || sessionMs != null || heartbeatMs != null)) {
      usage("--group-protocol consumer takes no --assignors/--session-timeout-ms/--heartbeat-interval-ms"
          + " (the broker owns them; use --remote-assignor)");
    }
    if (!consumerProtocol && remoteAssignor != null) usage("--remote-assignor needs --group-protocol consumer");

    Properties props = new Properties();
    if (commandConfig != null) props.putAll(readProperties(commandConfig));
    props.put("bootstrap.servers", bootstrap);
    props.put("group.id", group);
    props.put("group.protocol", protocol);
    props.put("enable.auto.commit", "false");
    props.put("auto.offset.reset", process ? "earliest" : "latest");
    props.put("key.deserializer", ByteArrayDeserializer.class.getName());
    props.put("value.deserializer", ByteArrayDeserializer.class.getName());
    List<String> assignorClasses = new ArrayList<>();
    for (String s : assignors) assignorClasses.add(ASSIGNORS.getOrDefault(s, s));
    if (!assignorClasses.isEmpty()) props.put("partition.assignment.strategy", String.join(",", assignorClasses));
    if (remoteAssignor != null) props.put("group.remote.assignor", remoteAssignor);
    if (instanceId != null) props.put("group.instance.id", instanceId);
    if (rack != null) props.put("client.rack", rack);
    if (clientId != null) props.put("client.id", clientId);
    if (sessionMs != null) {
      props.put("session.timeout.ms", sessionMs.toString());
      if (heartbeatMs == null) heartbeatMs = Math.max(100, sessionMs / 3);
    }
    if (heartbeatMs != null) props.put("heartbeat.interval.ms", heartbeatMs.toString());
    props.putAll(extra);

    Map<String, Object> cfg = Json.obj();
    cfg.put("ts_ms", System.currentTimeMillis());
    cfg.put("event", "config");
    cfg.put("client", "java");
    cfg.put("client_version", AppInfoParser.getVersion());
    cfg.put("pid", ProcessHandle.current().pid());
    cfg.put("group", group);
    cfg.put("topics", topics);
    cfg.put("group_protocol", protocol);
    cfg.put("assignors", assignors.isEmpty() && !consumerProtocol ? List.of("range", "cooperative-sticky") : assignors);
    cfg.put("remote_assignor", remoteAssignor);
    cfg.put("instance_id", instanceId);
    cfg.put("rack", rack);
    cfg.put("client_id", clientId);
    cfg.put("session_timeout_ms", sessionMs);
    cfg.put("duration_s", durationS);
    Json.emit(cfg);

    KafkaConsumer<byte[], byte[]> consumer;
    try {
      consumer = new KafkaConsumer<>(props);
    } catch (Exception e) {
      error(e);
      System.exit(1);
      return;
    }
    LiveConsumer member = new LiveConsumer(consumer);
    CountDownLatch done = new CountDownLatch(1);
    final boolean[] stopping = {false};
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      synchronized (stopping) {
        stopping[0] = true;
      }
      consumer.wakeup();
      try {
        // close() is bounded below; this bound only keeps a wedged client from holding the JVM
        if (done.await(40, TimeUnit.SECONDS)) Runtime.getRuntime().halt(exitCode[0]);
      } catch (InterruptedException ignored) {
        // exit anyway
      }
    }));
    int rc = member.run(topics, durationS, stopping);
    exitCode[0] = rc;
    done.countDown();
    // On SIGTERM the shutdown hook halts with rc as soon as done is counted down; otherwise this
    // runs the hook, which finds done counted down and halts with rc too.
    System.exit(rc);
  }

  private static final int[] exitCode = {0};

  private int run(List<String> topics, long durationS, boolean[] stopping) {
    int rc = 0;
    long deadline = System.currentTimeMillis() + durationS * 1000;
    try {
      consumer.subscribe(topics, new Listener());
      while (System.currentTimeMillis() < deadline) {
        synchronized (stopping) {
          if (stopping[0]) break;
        }
        ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
        if (process && !records.isEmpty()) {
          for (ConsumerRecord<byte[], byte[]> r : records) {
            Map<String, Object> o = event("processed");
            o.put("topic", r.topic());
            o.put("partition", r.partition());
            o.put("offset", r.offset());
            Json.emit(o);
          }
          commit(owned);
        }
      }
    } catch (WakeupException e) {
      // SIGTERM: leave below
    } catch (Exception e) {
      error(e);
      rc = 1;
    }
    try {
      consumer.close(Duration.ofSeconds(20));
    } catch (Exception e) {
      if (rc == 0) {
        error(e);
        rc = 1;
      }
    }
    Map<String, Object> o = event("left");
    Json.emit(o);
    return rc;
  }

  /** Commits the positions of {@code partitions} (the next offset to read) and prints them. */
  private void commit(Collection<TopicPartition> partitions) {
    Map<TopicPartition, OffsetAndMetadata> offsets = new java.util.HashMap<>();
    for (TopicPartition tp : partitions) {
      if (consumer.assignment().contains(tp)) offsets.put(tp, new OffsetAndMetadata(consumer.position(tp)));
    }
    if (offsets.isEmpty()) return;
    try {
      consumer.commitSync(offsets);
      List<Object> list = new ArrayList<>();
      for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
        Map<String, Object> one = Json.obj();
        one.put("topic", e.getKey().topic());
        one.put("partition", e.getKey().partition());
        one.put("offset", e.getValue().offset());
        list.add(one);
      }
      Map<String, Object> o = event("committed");
      o.put("offsets", list);
      Json.emit(o);
    } catch (Exception e) {
      error(e);
    }
  }

  static void error(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) root = root.getCause();
    Map<String, Object> err = Json.obj();
    err.put("kind", root.getClass().getSimpleName());
    err.put("message", String.valueOf(root.getMessage()));
    if (root != e) err.put("outer", e.getClass().getSimpleName() + ": " + e.getMessage());
    Map<String, Object> o = event("error");
    o.put("error", err);
    Json.emit(o);
  }

  static Map<String, Object> event(String name) {
    Map<String, Object> o = Json.obj();
    o.put("ts_ms", System.currentTimeMillis());
    o.put("event", name);
    return o;
  }

  private ConsumerGroupMetadata metadata() {
    try {
      return consumer.groupMetadata();
    } catch (Exception e) {
      return null;
    }
  }

  private void callback(String name, Collection<TopicPartition> partitions) {
    ConsumerGroupMetadata md = metadata();
    if (name.equals("assigned") && md != null
        && (!md.memberId().equals(lastMemberId) || md.generationId() != lastGeneration)) {
      lastMemberId = md.memberId();
      lastGeneration = md.generationId();
      Map<String, Object> j = event("joined");
      j.put("member_id", md.memberId());
      j.put("generation_id", md.generationId());
      Json.emit(j);
    }
    if (name.equals("assigned")) owned.addAll(partitions);
    else owned.removeAll(partitions);
    Map<String, Object> o = event(name);
    if (md != null && md.generationId() >= 0) o.put("generation_id", md.generationId());
    o.put("partitions", Json.partitions(partitions));
    o.put("owned", Json.partitions(owned));
    Json.emit(o);
    if (name.equals("assigned")) {
      Map<String, Object> r = event("reported");
      if (md != null) {
        r.put("member_id", md.memberId());
        r.put("generation_id", md.generationId());
        r.put("group_instance_id", md.groupInstanceId().orElse(null));
      }
      r.put("assignment", Json.partitions(consumer.assignment()));
      r.put("subscription", new ArrayList<>(new java.util.TreeSet<>(consumer.subscription())));
      Json.emit(r);
    }
  }

  private final class Listener implements ConsumerRebalanceListener {
    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
      if (process) commit(partitions);
      callback("revoked", partitions);
      if (revokeDelayMs > 0 && !partitions.isEmpty()) {
        try {
          Thread.sleep(revokeDelayMs);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
      callback("assigned", partitions);
    }

    @Override
    public void onPartitionsLost(Collection<TopicPartition> partitions) {
      callback("lost", partitions);
    }
  }
}
