package kcp.live;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.TopicPartition;

/**
 * A custom assignor that hands state out through the assignment's userData, as some in-house
 * assignors do: Kafka 4.x refuses to convert such a group to the consumer protocol (the state
 * would be lost), 3.x converts it and drops the state. Partitions are dealt round-robin over the
 * members sorted by id; every assignment carries the bytes "kcp-state".
 * Use it with `LiveConsumer --assignors kcp.live.UserDataAssignor`.
 */
public final class UserDataAssignor implements ConsumerPartitionAssignor {
  @Override
  public String name() {
    return "kcp-userdata";
  }

  @Override
  public GroupAssignment assign(Cluster metadata, GroupSubscription groupSubscription) {
    Map<String, Subscription> subscriptions = groupSubscription.groupSubscription();
    List<String> members = new ArrayList<>(new TreeSet<>(subscriptions.keySet()));
    Map<String, List<TopicPartition>> owned = new HashMap<>();
    for (String m : members) owned.put(m, new ArrayList<>());
    TreeSet<String> topics = new TreeSet<>();
    for (Subscription s : subscriptions.values()) topics.addAll(s.topics());
    int next = 0;
    for (String topic : topics) {
      Integer count = metadata.partitionCountForTopic(topic);
      if (count == null) continue;
      for (int p = 0; p < count; p++) {
        // the next member (in id order) that subscribes to the topic
        for (int tries = 0; tries < members.size(); tries++) {
          String m = members.get(next++ % members.size());
          if (subscriptions.get(m).topics().contains(topic)) {
            owned.get(m).add(new TopicPartition(topic, p));
            break;
          }
        }
      }
    }
    Map<String, Assignment> out = new HashMap<>();
    for (String m : members) {
      ByteBuffer state = ByteBuffer.wrap("kcp-state".getBytes(StandardCharsets.UTF_8));
      out.put(m, new Assignment(owned.get(m), state));
    }
    return new GroupAssignment(out);
  }
}
