package kcp.captures;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Small consumer used only to generate packet captures.
 *
 * <pre>
 * CaptureConsumer create-topics BOOTSTRAP name:partitions [name:partitions ...]
 * CaptureConsumer consume BOOTSTRAP key=value ... -- topic [topic ...]
 *   keys: group.id, client.id, partition.assignment.strategy, client.rack, group.instance.id,
 *         run.ms (how long to poll before close(), bounded to 120000), label (name printed in the log)
 * </pre>
 * Every rebalance callback prints one JSON line to stdout, with the consumer's own view of
 * generation and member id (consumer.groupMetadata()).
 */
public final class CaptureConsumer {
    private static final long MAX_RUN_MS = 120_000L;

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            throw new IllegalArgumentException("usage: create-topics|consume BOOTSTRAP ...");
        }
        if (args[0].equals("create-topics")) {
            createTopics(args);
        } else if (args[0].equals("consume")) {
            consume(args);
        } else {
            throw new IllegalArgumentException("unknown mode " + args[0]);
        }
    }

    private static void createTopics(String[] args) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[1]);
        List<NewTopic> topics = new ArrayList<>();
        for (int i = 2; i < args.length; i++) {
            String[] nv = args[i].split(":");
            topics.add(new NewTopic(nv[0], Integer.parseInt(nv[1]), (short) 1));
        }
        try (Admin admin = Admin.create(p)) {
            admin.createTopics(topics).all().get();
        }
        System.out.println("{\"event\":\"topics-created\",\"topics\":\"" + String.join(",", List.of(args).subList(2, args.length)) + "\"}");
    }

    private static void consume(String[] args) {
        String bootstrap = args[1];
        Map<String, String> opts = new TreeMap<>();
        List<String> topics = new ArrayList<>();
        boolean inTopics = false;
        for (int i = 2; i < args.length; i++) {
            if (inTopics) {
                topics.add(args[i]);
            } else if (args[i].equals("--")) {
                inTopics = true;
            } else {
                int eq = args[i].indexOf('=');
                opts.put(args[i].substring(0, eq), args[i].substring(eq + 1));
            }
        }
        long runMs = Math.min(MAX_RUN_MS, Long.parseLong(opts.getOrDefault("run.ms", "20000")));
        String label = opts.getOrDefault("label", opts.get("client.id"));
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        for (Map.Entry<String, String> e : opts.entrySet()) {
            if (!e.getKey().equals("run.ms") && !e.getKey().equals("label")) {
                p.put(e.getKey(), e.getValue());
            }
        }
        long start = System.currentTimeMillis();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            ConsumerRebalanceListener listener = new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    log(consumer, label, "revoked", partitions);
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    log(consumer, label, "assigned", partitions);
                }

                @Override
                public void onPartitionsLost(Collection<TopicPartition> partitions) {
                    log(consumer, label, "lost", partitions);
                }
            };
            consumer.subscribe(topics, listener);
            System.out.println("{\"event\":\"subscribed\",\"label\":\"" + label + "\",\"config\":\""
                    + opts.toString().replace("\"", "'") + "\",\"topics\":\"" + String.join(",", topics) + "\"}");
            System.out.flush();
            while (System.currentTimeMillis() - start < runMs) {
                consumer.poll(Duration.ofMillis(200));
            }
            System.out.println("{\"event\":\"closing\",\"label\":\"" + label + "\",\"generation\":"
                    + consumer.groupMetadata().generationId() + ",\"member_id\":\"" + consumer.groupMetadata().memberId()
                    + "\",\"assignment\":" + json(consumer.assignment()) + "}");
            System.out.flush();
        }
        System.out.println("{\"event\":\"closed\",\"label\":\"" + label + "\"}");
    }

    private static void log(KafkaConsumer<?, ?> consumer, String label, String what, Collection<TopicPartition> parts) {
        System.out.println("{\"event\":\"" + what + "\",\"label\":\"" + label + "\",\"generation\":"
                + consumer.groupMetadata().generationId() + ",\"member_id\":\"" + consumer.groupMetadata().memberId()
                + "\",\"partitions\":" + json(parts) + ",\"assignment\":" + json(consumer.assignment())
                + ",\"t_ms\":" + System.currentTimeMillis() + "}");
        System.out.flush();
    }

    /** {"topic":[p,...]} with topics and partitions sorted. */
    private static String json(Collection<TopicPartition> parts) {
        Map<String, List<Integer>> byTopic = new TreeMap<>();
        for (TopicPartition tp : parts) {
            byTopic.computeIfAbsent(tp.topic(), t -> new ArrayList<>()).add(tp.partition());
        }
        return byTopic.entrySet().stream()
                .map(e -> "\"" + e.getKey() + "\":" + e.getValue().stream().sorted().map(String::valueOf)
                        .collect(Collectors.joining(",", "[", "]")))
                .collect(Collectors.joining(",", "{", "}"));
    }
}
