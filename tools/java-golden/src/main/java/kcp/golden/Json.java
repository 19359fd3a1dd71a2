package kcp.golden;

import java.util.List;
import java.util.Map;

/**
 * Minimal deterministic JSON writer: objects keep insertion order (use LinkedHashMap), arrays of scalars are
 * written on one line, everything else is indented by two spaces. Non-ASCII characters are written as
 * \\uXXXX escapes (UTF-16 code units, so a supplementary character becomes an escaped surrogate pair), which
 * keeps the files pure ASCII and byte-stable.
 */
final class Json {
    private Json() {
    }

    static String write(Object value) {
        StringBuilder sb = new StringBuilder();
        write(value, sb, 0);
        sb.append('\n');
        return sb.toString();
    }

    private static boolean isScalar(Object v) {
        return !(v instanceof Map) && !(v instanceof List);
    }

    private static void indent(StringBuilder sb, int n) {
        for (int i = 0; i < n; i++) {
            sb.append("  ");
        }
    }

    private static void write(Object v, StringBuilder sb, int level) {
        if (v == null) {
            sb.append("null");
        } else if (v instanceof String s) {
            string(s, sb);
        } else if (v instanceof Boolean b) {
            sb.append(b ? "true" : "false");
        } else if (v instanceof Integer || v instanceof Long || v instanceof Short) {
            sb.append(v);
        } else if (v instanceof Map<?, ?> m) {
            if (m.isEmpty()) {
                sb.append("{}");
                return;
            }
            sb.append("{\n");
            int i = 0;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                indent(sb, level + 1);
                string((String) e.getKey(), sb);
                sb.append(": ");
                write(e.getValue(), sb, level + 1);
                if (++i < m.size()) {
                    sb.append(',');
                }
                sb.append('\n');
            }
            indent(sb, level);
            sb.append('}');
        } else if (v instanceof List<?> l) {
            if (l.isEmpty()) {
                sb.append("[]");
                return;
            }
            boolean inline = l.stream().allMatch(Json::isScalar);
            if (inline) {
                sb.append('[');
                for (int i = 0; i < l.size(); i++) {
                    if (i > 0) {
                        sb.append(", ");
                    }
                    write(l.get(i), sb, level);
                }
                sb.append(']');
                return;
            }
            sb.append("[\n");
            for (int i = 0; i < l.size(); i++) {
                indent(sb, level + 1);
                write(l.get(i), sb, level + 1);
                if (i + 1 < l.size()) {
                    sb.append(',');
                }
                sb.append('\n');
            }
            indent(sb, level);
            sb.append(']');
        } else {
            throw new IllegalArgumentException("unsupported JSON value " + v.getClass());
        }
    }

    private static void string(String s, StringBuilder sb) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20 || c >= 0x7f) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }
}
