package kcp.live;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A share-group member (KIP-932, Kafka 4.1 brokers with share.version=1) for the live tests: it
 * subscribes and polls in a loop (records are acknowledged implicitly by the next poll), so that the
 * group coordinator writes the share group's records (member, epochs, target and current
 * assignments, state-partition metadata) to __consumer_offsets. Compiled against both client
 * versions; only kafka-clients 4.1 talks to a broker's share-group API.
 *
 * <pre>
 * LiveShareConsumer --bootstrap[-server] HOST:PORT --group G --topics T1,T2 [--client-id C]
 *   [--duration-s N] [--config KEY=VALUE]...
 * </pre>
 *
 * Lines: {"event": "config", ...}, then {"event": "polled", "records": N} for the first poll and
 * every poll that returned records, "error" (then exit 1), finally "left" after close() returned.
 * SIGTERM and --duration-s both close the consumer (it leaves the group) and exit 0.
 */
public final class LiveShareConsumer {
  private LiveShareConsumer() {}

  static void usage(String why) {
    System.err.println("LiveShareConsumer: " + why);
    System.err.println("usage: LiveShareConsumer --bootstrap B --group G --topics T1,T2 [--client-id C]"
        + " [--duration-s N] [--config K=V]...");
    System.exit(2);
  }

  public static void main(String[] args) throws Exception {
    String bootstrap = null, group = null, topics = null, clientId = null;
    long durationS = 600;
    Properties props = new Properties();
    for (int i = 0; i < args.length; i += 2) {
      if (i + 1 >= args.length) usage("missing value for " + args[i]);
      String v = args[i + 1];
      switch (args[i]) {
        case "--bootstrap":
        case "--bootstrap-server": bootstrap = v; break;
        case "--group": group = v; break;
        case "--topics": topics = v; break;
        case "--client-id": clientId = v; break;
        case "--duration-s": durationS = Long.parseLong(v); break;
        case "--config": {
          int eq = v.indexOf('=');
          if (eq <= 0) usage("--config wants KEY=VALUE");
          props.put(v.substring(0, eq), v.substring(eq + 1));
          break;
        }
        default: usage("unknown argument " + args[i]);
      }
    }
    if (bootstrap == null || group == null || topics == null) usage("--bootstrap, --group and --topics are required");
    props.put("bootstrap.servers", bootstrap);
    props.put("group.id", group);
    if (clientId != null) props.put("client.id", clientId);
    List<String> topicList = Arrays.asList(topics.split(","));

    Map<String, Object> cfg = Json.obj();
    cfg.put("event", "config");
    cfg.put("group", group);
    cfg.put("topics", topicList);
    cfg.put("duration_s", durationS);
    Json.emit(cfg);

    KafkaShareConsumer<byte[], byte[]> consumer =
        new KafkaShareConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    boolean[] stopping = {false};
    CountDownLatch done = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      synchronized (stopping) {
        stopping[0] = true;
      }
      consumer.wakeup();
      try {
        done.await(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }));
    int rc = 0;
    try {
      consumer.subscribe(topicList);
      long deadline = System.currentTimeMillis() + durationS * 1000;
      boolean first = true;
      while (System.currentTimeMillis() < deadline) {
        synchronized (stopping) {
          if (stopping[0]) break;
        }
        ConsumerRecords<byte[], byte[]> records;
        try {
          records = consumer.poll(Duration.ofMillis(500));
        } catch (WakeupException e) {
          break;
        }
        if (first || !records.isEmpty()) {
          Map<String, Object> o = Json.obj();
          o.put("event", "polled");
          o.put("ts_ms", System.currentTimeMillis());
          o.put("records", records.count());
          Json.emit(o);
          first = false;
        }
      }
    } catch (Exception e) {
      Map<String, Object> err = Json.obj();
      err.put("event", "error");
      err.put("error", e.toString());
      Json.emit(err);
      rc = 1;
    } finally {
      try {
        consumer.close(Duration.ofSeconds(10));
      } catch (Exception e) {
        // Closing after an error: the error line is already out.
      }
      Map<String, Object> o = Json.obj();
      o.put("event", "left");
      o.put("ts_ms", System.currentTimeMillis());
      Json.emit(o);
      done.countDown();
    }
    System.exit(rc);
  }
}
