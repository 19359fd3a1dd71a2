package kcp.javaref;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Minimal deterministic JSON writer. Values are null, Boolean, Integer/Long, String, List, Map
 * (LinkedHashMap: insertion order is kept). Containers whose compact form is short, or that hold no
 * further container, are written on one line; others are broken into indented lines.
 */
final class Json {
    private Json() {}

    static Map<String, Object> obj() {
        return new LinkedHashMap<>();
    }

    static List<Object> arr() {
        return new ArrayList<>();
    }

    static String write(Object v) {
        StringBuilder sb = new StringBuilder();
        pretty(sb, v, 0);
        sb.append('\n');
        return sb.toString();
    }

    private static final int WIDTH = 110;

    private static int height(Object v) {
        int h = 0;
        if (v instanceof Map) {
            for (Object c : ((Map<?, ?>) v).values()) h = Math.max(h, 1 + height(c));
        } else if (v instanceof List) {
            for (Object c : (List<?>) v) h = Math.max(h, 1 + height(c));
        }
        return h;
    }

    private static void pretty(StringBuilder sb, Object v, int indent) {
        if (!(v instanceof Map) && !(v instanceof List)) {
            compact(sb, v);
            return;
        }
        boolean empty = v instanceof Map ? ((Map<?, ?>) v).isEmpty() : ((List<?>) v).isEmpty();
        if (empty || height(v) <= 1) {
            compact(sb, v);
            return;
        }
        StringBuilder c = new StringBuilder();
        compact(c, v);
        if (c.length() + indent <= WIDTH) {
            sb.append(c);
            return;
        }
        String pad = "  ".repeat(indent + 1);
        if (v instanceof Map) {
            sb.append("{\n");
            boolean first = true;
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                if (!first) sb.append(",\n");
                first = false;
                sb.append(pad);
                string(sb, (String) e.getKey());
                sb.append(": ");
                pretty(sb, e.getValue(), indent + 1);
            }
            sb.append('\n').append("  ".repeat(indent)).append('}');
        } else {
            sb.append("[\n");
            boolean first = true;
            for (Object e : (List<?>) v) {
                if (!first) sb.append(",\n");
                first = false;
                sb.append(pad);
                pretty(sb, e, indent + 1);
            }
            sb.append('\n').append("  ".repeat(indent)).append(']');
        }
    }

    private static void compact(StringBuilder sb, Object v) {
        if (v == null) {
            sb.append("null");
        } else if (v instanceof Boolean || v instanceof Integer || v instanceof Long) {
            sb.append(v);
        } else if (v instanceof String) {
            string(sb, (String) v);
        } else if (v instanceof Map) {
            sb.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                if (!first) sb.append(", ");
                first = false;
                string(sb, (String) e.getKey());
                sb.append(": ");
                compact(sb, e.getValue());
            }
            sb.append('}');
        } else if (v instanceof List) {
            sb.append('[');
            boolean first = true;
            for (Object e : (List<?>) v) {
                if (!first) sb.append(", ");
                first = false;
                compact(sb, e);
            }
            sb.append(']');
        } else if (v instanceof Double) {
            double d = (Double) v;
            sb.append(String.format(java.util.Locale.ROOT, "%.3f", d));
        } else {
            throw new IllegalArgumentException("not a JSON value: " + v.getClass());
        }
    }

    /** Strings are written ASCII-only: everything outside 0x20..0x7e is a \\u escape (UTF-16 units). */
    static void string(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            if (ch == '"') sb.append("\\\"");
            else if (ch == '\\') sb.append("\\\\");
            else if (ch == '\n') sb.append("\\n");
            else if (ch < 0x20 || ch > 0x7e) sb.append(String.format("\\u%04x", (int) ch));
            else sb.append(ch);
        }
        sb.append('"');
    }
}
