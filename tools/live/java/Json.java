package kcp.live;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.TopicPartition;

/** A minimal JSON writer (no dependencies beyond kafka-clients), for one object per output line. */
final class Json {
  private Json() {}

  /** An insertion-ordered JSON object. */
  static Map<String, Object> obj() {
    return new LinkedHashMap<>();
  }

  /** `[{"topic": .., "partitions": [..]}]`, topics and partitions sorted (the kcp contract's shape). */
  static List<Object> partitions(Collection<TopicPartition> tps) {
    TreeMap<String, TreeSet<Integer>> byTopic = new TreeMap<>();
    for (TopicPartition tp : tps) {
      byTopic.computeIfAbsent(tp.topic(), t -> new TreeSet<>()).add(tp.partition());
    }
    List<Object> out = new ArrayList<>();
    for (Map.Entry<String, TreeSet<Integer>> e : byTopic.entrySet()) {
      Map<String, Object> o = obj();
      o.put("topic", e.getKey());
      o.put("partitions", new ArrayList<>(e.getValue()));
      out.add(o);
    }
    return out;
  }

  static String write(Object v) {
    StringBuilder sb = new StringBuilder();
    write(sb, v);
    return sb.toString();
  }

  private static void write(StringBuilder sb, Object v) {
    if (v == null) {
      sb.append("null");
    } else if (v instanceof String) {
      string(sb, (String) v);
    } else if (v instanceof Number || v instanceof Boolean) {
      sb.append(v);
    } else if (v instanceof Map) {
      sb.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
        if (!first) sb.append(", ");
        first = false;
        string(sb, String.valueOf(e.getKey()));
        sb.append(": ");
        write(sb, e.getValue());
      }
      sb.append('}');
    } else if (v instanceof Collection) {
      sb.append('[');
      boolean first = true;
      for (Object o : (Collection<?>) v) {
        if (!first) sb.append(", ");
        first = false;
        write(sb, o);
      }
      sb.append(']');
    } else {
      string(sb, v.toString());
    }
  }

  private static void string(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"': sb.append("\\\""); break;
        case '\\': sb.append("\\\\"); break;
        case '\n': sb.append("\\n"); break;
        case '\r': sb.append("\\r"); break;
        case '\t': sb.append("\\t"); break;
        default:
          if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
          else sb.append(c);
      }
    }
    sb.append('"');
  }

  /** Prints one JSON object on its own line and flushes (the tests read the lines as they come). */
  static synchronized void emit(Map<String, Object> o) {
    System.out.println(write(o));
    System.out.flush();
  }
}
