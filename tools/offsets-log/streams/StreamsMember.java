import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.Stores;

/**
 * A Kafka Streams member of a streams group (KIP-1071, `group.protocol=streams`) for
 * tools/offsets-log/capture-streams.sh: a topology of two subtopologies (a repartition, then a count
 * in an in-memory store with its changelog), an application server endpoint and a client tag, so
 * that every field of the streams group records has a value. Prints its state changes as JSON
 * lines; runs until SIGTERM or `SECONDS` pass, then closes (leaves the group).
 *
 * <pre>StreamsMember BOOTSTRAP APPLICATION_ID CLIENT_ID STATE_DIR SECONDS</pre>
 */
public final class StreamsMember {
  public static void main(String[] args) throws Exception {
    String bootstrap = args[0], app = args[1], client = args[2], stateDir = args[3];
    long seconds = Long.parseLong(args[4]);
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("application.id", app);
    p.put("client.id", client);
    p.put("group.protocol", "streams");
    p.put("state.dir", stateDir);
    p.put("default.key.serde", Serdes.ByteArray().getClass().getName());
    p.put("default.value.serde", Serdes.ByteArray().getClass().getName());
    p.put("application.server", "localhost:" + (9000 + Math.abs(client.hashCode() % 1000)));
    p.put("client.tag.zone", "z1");
    StreamsBuilder b = new StreamsBuilder();
    b.<byte[], byte[]>stream(app + "-in")
        .repartition()
        .groupByKey()
        .count(Materialized.<byte[], Long>as(Stores.inMemoryKeyValueStore("counts"))
            .withKeySerde(Serdes.ByteArray()).withValueSerde(Serdes.Long()))
        .toStream()
        .to(app + "-out", Produced.with(Serdes.ByteArray(), Serdes.Long()));
    KafkaStreams streams = new KafkaStreams(b.build(), p);
    streams.setStateListener((now, before) -> System.out.println("{\"event\": \"state\", \"client\": \"" + client
        + "\", \"state\": \"" + now + "\", \"ts_ms\": " + System.currentTimeMillis() + "}"));
    CountDownLatch stop = new CountDownLatch(1);
    CountDownLatch closed = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      stop.countDown();
      try {
        closed.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }));
    streams.start();
    stop.await(seconds, java.util.concurrent.TimeUnit.SECONDS);
    streams.close(Duration.ofSeconds(20));
    System.out.println("{\"event\": \"left\", \"client\": \"" + client + "\", \"ts_ms\": " + System.currentTimeMillis() + "}");
    closed.countDown();
  }
}
