// What java.util.Properties.load(InputStream) reads from each *.properties file of a directory
// (the way Kafka's tools read --command-config), written beside it as NAME.java-expected:
// one `key=value` line per entry, sorted by key, with '\', '=' and every character outside
// printable ASCII written as backslash-u and four hex digits; or one `ERROR ...` line when Java refuses the file.
// tests/properties_corpus.rs checks our reader against these files.
//
// Run: tools/java-properties/regen.sh

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.stream.Stream;

public class PropertiesDump {
    static String escape(String s) {
        StringBuilder out = new StringBuilder();
        for (char c : s.toCharArray()) {
            if (c < 0x20 || c > 0x7e || c == '\\' || c == '=') {
                out.append(String.format("\\u%04X", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    public static void main(String[] args) throws IOException {
        List<Path> files = new ArrayList<>();
        try (Stream<Path> listing = Files.list(Path.of(args[0]))) {
            listing.filter(p -> p.toString().endsWith(".properties")).forEach(files::add);
        }
        Collections.sort(files);
        for (Path file : files) {
            StringBuilder out = new StringBuilder();
            Properties properties = new Properties();
            try (InputStream in = new FileInputStream(file.toFile())) {
                properties.load(in);
                List<String> keys = new ArrayList<>(properties.stringPropertyNames());
                Collections.sort(keys);
                for (String key : keys) {
                    out.append(escape(key)).append('=').append(escape(properties.getProperty(key))).append('\n');
                }
            } catch (IllegalArgumentException e) {
                out.append("ERROR ").append(e.getMessage()).append('\n');
            }
            String name = file.getFileName().toString().replaceFirst("\\.properties$", ".java-expected");
            Files.writeString(file.resolveSibling(name), out.toString(), StandardCharsets.US_ASCII);
        }
    }
}
