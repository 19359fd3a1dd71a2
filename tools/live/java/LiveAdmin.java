package kcp.live;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * The Java admin client's view, for the live tests' setup and cross-checks. Prints JSON.
 *
 * <pre>
 * LiveAdmin --bootstrap B [--command-config FILE] create-topic NAME PARTITIONS [RF]
 * LiveAdmin --bootstrap B create-partitions NAME TOTAL
 * LiveAdmin --bootstrap B delete-topic NAME
 * LiveAdmin --bootstrap B describe-group G [G...]   # one JSON line per group
 * LiveAdmin --bootstrap B list-groups               # one JSON line
 * LiveAdmin --bootstrap B describe-cluster          # one JSON line
 * LiveAdmin --bootstrap B commit-offsets G TOPIC PARTITION OFFSET   # AlterConsumerGroupOffsets
 * LiveAdmin --bootstrap B delete-group G             # DeleteGroups (the group must be empty)
 * LiveAdmin --bootstrap B alter-group-config G KEY=VALUE...   # 4.x group configs (KIP-848), e.g.
 *                                                    # consumer.session.timeout.ms=3000
 * </pre>
 *
 * describe-group prints what Java's Admin.describeConsumerGroups reports (DescribeGroups for a
 * classic group, ConsumerGroupDescribe for a KIP-848 group on 4.x): state, type, assignor,
 * coordinator, and per member its ids, client, host, assignment and (4.x) target assignment, member
 * epoch and `upgraded`. Fields that the compiled-against kafka-clients lacks are left out.
 * Exit 0 on success, 1 with an {"error": ...} line on failure, 2 on a usage error.
 */
public final class LiveAdmin {
  private LiveAdmin() {}

  private static final long TIMEOUT_S = 30;

  static void usage(String why) {
    System.err.println("LiveAdmin: " + why);
    System.err.println("usage: LiveAdmin --bootstrap B [--command-config FILE] "
        + "create-topic NAME PARTITIONS [RF] | create-partitions NAME TOTAL | delete-topic NAME | "
        + "describe-group G... | list-groups | describe-cluster | alter-group-config G K=V...");
    System.exit(2);
  }

  public static void main(String[] args) {
    String bootstrap = null, commandConfig = null;
    int i = 0;
    for (; i < args.length && args[i].startsWith("--"); i += 2) {
      if (i + 1 >= args.length) usage(args[i] + " needs a value");
      switch (args[i]) {
        case "--bootstrap":
        case "--bootstrap-server": bootstrap = args[i + 1]; break;
        case "--command-config": commandConfig = args[i + 1]; break;
        default: usage("unknown option " + args[i]);
      }
    }
    if (bootstrap == null || i >= args.length) usage("--bootstrap and a command are required");
    String cmd = args[i];
    List<String> rest = List.of(args).subList(i + 1, args.length);
    Properties props = new Properties();
    if (commandConfig != null) props.putAll(LiveConsumer.readProperties(commandConfig));
    props.put("bootstrap.servers", bootstrap);
    props.put("request.timeout.ms", "15000");
    props.put("default.api.timeout.ms", "30000");
    int rc = 0;
    try (Admin admin = Admin.create(props)) {
      switch (cmd) {
        case "create-topic": createTopic(admin, rest); break;
        case "create-partitions": createPartitions(admin, rest); break;
        case "delete-topic": deleteTopic(admin, rest); break;
        case "commit-offsets": commitOffsets(admin, rest); break;
        case "delete-group": deleteGroup(admin, rest); break;
        case "describe-group": describeGroups(admin, rest); break;
        case "list-groups": listGroups(admin); break;
        case "describe-cluster": describeCluster(admin); break;
        case "alter-group-config": alterGroupConfig(admin, rest); break;
        default: usage("unknown command " + cmd);
      }
    } catch (ExecutionException e) {
      LiveConsumer.error(e.getCause() == null ? e : e.getCause());
      rc = 1;
    } catch (Exception e) {
      LiveConsumer.error(e);
      rc = 1;
    }
    System.out.flush();
    System.exit(rc);
  }

  static void createTopic(Admin admin, List<String> a) throws Exception {
    if (a.size() < 2 || a.size() > 3) usage("create-topic NAME PARTITIONS [RF]");
    String name = a.get(0);
    int partitions = Integer.parseInt(a.get(1));
    short rf = a.size() == 3 ? Short.parseShort(a.get(2)) : 1;
    boolean existed = false;
    try {
      admin.createTopics(List.of(new NewTopic(name, partitions, rf))).all().get(TIMEOUT_S, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof TopicExistsException)) throw e;
      existed = true;
    }
    // Wait until every partition has a leader, so that a member joining next sees them all.
    long deadline = System.currentTimeMillis() + TIMEOUT_S * 1000;
    while (true) {
      org.apache.kafka.clients.admin.TopicDescription d;
      try {
        d = admin.describeTopics(List.of(name)).allTopicNames().get(TIMEOUT_S, TimeUnit.SECONDS).get(name);
      } catch (ExecutionException e) {
        // With several brokers the one asked may not have the new topic's metadata yet.
        if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) throw e;
        d = null;
      }
      if (d != null && d.partitions().size() == partitions
          && d.partitions().stream().allMatch(p -> p.leader() != null)) break;
      if (System.currentTimeMillis() > deadline) throw new IllegalStateException("topic " + name + " has no leaders after " + TIMEOUT_S + "s");
      Thread.sleep(100);
    }
    Map<String, Object> o = Json.obj();
    o.put("topic", name);
    o.put("partitions", partitions);
    o.put("replication_factor", (int) rf);
    o.put("existed", existed);
    Json.emit(o);
  }

  static void createPartitions(Admin admin, List<String> a) throws Exception {
    if (a.size() != 2) usage("create-partitions NAME TOTAL");
    admin.createPartitions(Map.of(a.get(0), NewPartitions.increaseTo(Integer.parseInt(a.get(1)))))
        .all().get(TIMEOUT_S, TimeUnit.SECONDS);
    Map<String, Object> o = Json.obj();
    o.put("topic", a.get(0));
    o.put("partitions", Integer.parseInt(a.get(1)));
    Json.emit(o);
  }

  static void deleteTopic(Admin admin, List<String> a) throws Exception {
    if (a.size() != 1) usage("delete-topic NAME");
    admin.deleteTopics(List.of(a.get(0))).all().get(TIMEOUT_S, TimeUnit.SECONDS);
    Map<String, Object> o = Json.obj();
    o.put("deleted", a.get(0));
    Json.emit(o);
  }

  static void commitOffsets(Admin admin, List<String> a) throws Exception {
    if (a.size() != 4) usage("commit-offsets G TOPIC PARTITION OFFSET");
    TopicPartition tp = new TopicPartition(a.get(1), Integer.parseInt(a.get(2)));
    long offset = Long.parseLong(a.get(3));
    admin.alterConsumerGroupOffsets(a.get(0),
        Map.of(tp, new org.apache.kafka.clients.consumer.OffsetAndMetadata(offset, "kcp-live")))
        .all().get(TIMEOUT_S, TimeUnit.SECONDS);
    Map<String, Object> o = Json.obj();
    o.put("committed", a.get(0));
    o.put("offset", offset);
    Json.emit(o);
  }

  static void deleteGroup(Admin admin, List<String> a) throws Exception {
    if (a.size() != 1) usage("delete-group G");
    admin.deleteConsumerGroups(List.of(a.get(0))).all().get(TIMEOUT_S, TimeUnit.SECONDS);
    Map<String, Object> o = Json.obj();
    o.put("deleted_group", a.get(0));
    Json.emit(o);
  }

  /** Calls a no-argument accessor that only some kafka-clients versions have; null when absent. */
  static Object optional(Object target, String method) {
    try {
      Method m = target.getClass().getMethod(method);
      Object v = m.invoke(target);
      if (v instanceof Optional) return ((Optional<?>) v).orElse(null);
      return v;
    } catch (ReflectiveOperationException e) {
      return null;
    }
  }

  static Map<String, Object> node(Node n) {
    if (n == null) return null;
    Map<String, Object> o = Json.obj();
    o.put("id", n.id());
    o.put("host", n.host());
    o.put("port", n.port());
    return o;
  }

  static List<Object> assignment(Object memberAssignment) {
    if (memberAssignment == null) return null;
    Object tps = optional(memberAssignment, "topicPartitions");
    @SuppressWarnings("unchecked")
    Set<TopicPartition> set = (Set<TopicPartition>) tps;
    return set == null ? null : Json.partitions(set);
  }

  static void describeGroups(Admin admin, List<String> groups) throws Exception {
    if (groups.isEmpty()) usage("describe-group G...");
    Map<String, ConsumerGroupDescription> all =
        admin.describeConsumerGroups(groups).all().get(TIMEOUT_S, TimeUnit.SECONDS);
    for (String g : groups) {
      ConsumerGroupDescription d = all.get(g);
      Map<String, Object> o = Json.obj();
      o.put("group_id", d.groupId());
      Object state = optional(d, "groupState"); // 4.x; state() before
      if (state == null) state = optional(d, "state");
      o.put("state", state == null ? null : state.toString());
      Object type = optional(d, "type");
      o.put("type", type == null ? null : type.toString().toLowerCase());
      o.put("simple", d.isSimpleConsumerGroup());
      o.put("assignor", d.partitionAssignor());
      o.put("coordinator", node(d.coordinator()));
      o.put("group_epoch", optional(d, "groupEpoch"));
      o.put("target_assignment_epoch", optional(d, "targetAssignmentEpoch"));
      List<Object> members = new ArrayList<>();
      for (MemberDescription m : d.members()) {
        Map<String, Object> mo = Json.obj();
        mo.put("member_id", m.consumerId());
        mo.put("group_instance_id", m.groupInstanceId().orElse(null));
        mo.put("client_id", m.clientId());
        mo.put("host", m.host());
        mo.put("assignment", assignment(m.assignment()));
        mo.put("target_assignment", assignment(optional(m, "targetAssignment")));
        mo.put("member_epoch", optional(m, "memberEpoch"));
        mo.put("upgraded", optional(m, "upgraded"));
        members.add(mo);
      }
      members.sort((x, y) -> String.valueOf(((Map<?, ?>) x).get("member_id"))
          .compareTo(String.valueOf(((Map<?, ?>) y).get("member_id"))));
      o.put("members", members);
      Json.emit(o);
    }
  }

  static void listGroups(Admin admin) throws Exception {
    Collection<ConsumerGroupListing> listings = admin.listConsumerGroups().all().get(TIMEOUT_S, TimeUnit.SECONDS);
    List<Object> groups = new ArrayList<>();
    for (ConsumerGroupListing l : listings) {
      Map<String, Object> o = Json.obj();
      o.put("group_id", l.groupId());
      Object state = optional(l, "groupState");
      if (state == null) state = optional(l, "state");
      o.put("state", state == null ? null : state.toString());
      Object type = optional(l, "type");
      o.put("type", type == null ? null : type.toString().toLowerCase());
      groups.add(o);
    }
    groups.sort((x, y) -> String.valueOf(((Map<?, ?>) x).get("group_id"))
        .compareTo(String.valueOf(((Map<?, ?>) y).get("group_id"))));
    Map<String, Object> out = Json.obj();
    out.put("groups", groups);
    Json.emit(out);
  }

  static void alterGroupConfig(Admin admin, List<String> a) throws Exception {
    if (a.size() < 2) usage("alter-group-config G KEY=VALUE...");
    // ConfigResource.Type.GROUP exists from kafka-clients 4.0 on: by name, so this compiles on 3.9.
    ConfigResource.Type type;
    try {
      type = ConfigResource.Type.valueOf("GROUP");
    } catch (IllegalArgumentException e) {
      throw new UnsupportedOperationException("group configs need kafka-clients 4.x");
    }
    List<AlterConfigOp> ops = new ArrayList<>();
    Map<String, Object> set = Json.obj();
    for (String kv : a.subList(1, a.size())) {
      int eq = kv.indexOf('=');
      if (eq <= 0) usage("alter-group-config wants KEY=VALUE");
      ops.add(new AlterConfigOp(new ConfigEntry(kv.substring(0, eq), kv.substring(eq + 1)), AlterConfigOp.OpType.SET));
      set.put(kv.substring(0, eq), kv.substring(eq + 1));
    }
    admin.incrementalAlterConfigs(Map.of(new ConfigResource(type, a.get(0)), ops)).all().get(TIMEOUT_S, TimeUnit.SECONDS);
    Map<String, Object> o = Json.obj();
    o.put("group_id", a.get(0));
    o.put("set", set);
    Json.emit(o);
  }

  static void describeCluster(Admin admin) throws Exception {
    DescribeClusterResult r = admin.describeCluster();
    Map<String, Object> o = Json.obj();
    o.put("cluster_id", r.clusterId().get(TIMEOUT_S, TimeUnit.SECONDS));
    o.put("controller", node(r.controller().get(TIMEOUT_S, TimeUnit.SECONDS)));
    List<Object> nodes = new ArrayList<>();
    for (Node n : r.nodes().get(TIMEOUT_S, TimeUnit.SECONDS)) nodes.add(node(n));
    o.put("brokers", nodes);
    Json.emit(o);
  }
}
