package dev.sandbox4j.apicheck;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The public surface of every library module (public and protected types and members of its packages
 * outside {@code internal}, as javap prints them) equals the dump committed in
 * {@code <module>/api/<module>.api}; a change fails the build with the lines that differ. After an
 * intended change, regenerate the dumps and commit them with the change:
 *
 * <pre>
 * ./mvnw -B -pl sandbox-api-check -am test -Dtest=ApiSurfaceTest -Dsurefire.failIfNoSpecifiedTests=false -Dsandbox4j.api.update=true
 * </pre>
 */
class ApiSurfaceTest {
    /** The published library modules; a new one is added here (the test fails on a module with no dump). */
    static final List<String> MODULES = List.of(
            "sandbox-policy", "sandbox-api", "sandbox-egress", "sandbox-compose", "sandbox-tool", "sandbox-http", "sandbox-local",
            "sandbox-docker", "sandbox-e2b", "sandbox-daytona", "sandbox-vercel", "sandbox-modal",
            "sandbox-kubernetes", "sandbox-redis", "sandbox-tck", "sandbox4j-langchain4j", "sandbox4j-mcp",
            "sandbox4j-micrometer", "sandbox4j-spring-boot-starter");

    private static final Pattern LOCAL_OR_ANONYMOUS = Pattern.compile(".*\\$[0-9].*");

    @Test
    void everyModulesPublicSurfaceMatchesItsCommittedDump() throws IOException {
        Path root = Path.of("").toAbsolutePath().getParent();
        boolean update = Boolean.getBoolean("sandbox4j.api.update");
        StringBuilder problems = new StringBuilder();
        for (String module : MODULES) {
            Path classes = root.resolve(module).resolve("target/classes");
            assertTrue(Files.isDirectory(classes), module + " is not compiled: " + classes);
            String dump = dump(classes);
            Path file = root.resolve(module).resolve("api").resolve(module + ".api");
            if (update) {
                Files.createDirectories(file.getParent());
                Files.writeString(file, dump, StandardCharsets.UTF_8);
                continue;
            }
            if (!Files.exists(file)) {
                problems.append(module).append(": no committed dump ").append(root.relativize(file)).append('\n');
                continue;
            }
            String committed = Files.readString(file, StandardCharsets.UTF_8);
            if (!committed.equals(dump)) {
                problems.append(module).append(": the public surface differs from ").append(root.relativize(file))
                        .append(" (- committed, + built)\n").append(difference(committed, dump));
            }
        }
        if (problems.length() > 0) {
            fail("The public API changed. If the change is intended, regenerate the dumps and commit them:\n"
                    + "  ./mvnw -B -pl sandbox-api-check -am test -Dtest=ApiSurfaceTest"
                    + " -Dsurefire.failIfNoSpecifiedTests=false -Dsandbox4j.api.update=true\n" + problems);
        }
    }

    /**
     * No public or protected signature names a type of an {@code internal} package (issue 32: the
     * adapters' runners once showed their internal handle type in their superclass). Checked on the
     * built surface, so a dump regenerated with such a line does not make it pass.
     */
    @Test
    void noPublicSignatureNamesAnInternalType() throws IOException {
        Path root = Path.of("").toAbsolutePath().getParent();
        Pattern internal = Pattern.compile("dev\\.sandbox4j(\\.\\w+)*\\.internal\\.\\w+");
        StringBuilder found = new StringBuilder();
        for (String module : MODULES) {
            Path classes = root.resolve(module).resolve("target/classes");
            assertTrue(Files.isDirectory(classes), module + " is not compiled: " + classes);
            for (String line : dump(classes).split("\n")) {
                if (internal.matcher(line).find()) {
                    found.append(module).append(": ").append(line.strip()).append('\n');
                }
            }
        }
        assertTrue(found.length() == 0, "public signatures naming internal types:\n" + found);
    }

    /** The module's surface: one block per accessible type (sorted by name), its members sorted. */
    static String dump(Path classes) throws IOException {
        List<String> names;
        try (Stream<Path> files = Files.walk(classes)) {
            names = files.filter(p -> p.toString().endsWith(".class"))
                    .map(p -> classes.relativize(p).toString())
                    .filter(n -> !n.startsWith("META-INF") && !n.endsWith("module-info.class")
                            && !n.endsWith("package-info.class"))
                    .map(n -> n.substring(0, n.length() - ".class".length()).replace('/', '.').replace('\\', '.'))
                    .filter(n -> n.startsWith("dev.sandbox4j.") && !n.contains(".internal.") && !n.endsWith(".internal"))
                    .filter(n -> !LOCAL_OR_ANONYMOUS.matcher(n).matches())
                    .sorted()
                    .collect(Collectors.toList());
        }
        if (names.isEmpty()) {
            return "";
        }
        ToolProvider javap = ToolProvider.findFirst("javap").orElseThrow();
        List<String> args = new ArrayList<>(List.of("-protected", "-cp", classes.toString()));
        args.addAll(names);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int rc = javap.run(new PrintWriter(out), new PrintWriter(err), args.toArray(String[]::new));
        if (rc != 0) {
            throw new UncheckedIOException(new IOException("javap failed (" + rc + "): " + err));
        }
        Map<String, List<String>> types = new TreeMap<>();
        String header = null;
        List<String> members = null;
        for (String line : out.toString().split("\n")) {
            if (line.startsWith("Compiled from") || line.isBlank()) {
                continue;
            }
            if (header == null) {
                header = line.endsWith(" {") ? line.substring(0, line.length() - 2) : line;
                members = new ArrayList<>();
            } else if (line.equals("}")) {
                if (header.startsWith("public ") || header.startsWith("protected ")) {
                    members.sort(null);
                    types.put(typeName(header), prepend(header, members));
                }
                header = null;
            } else {
                members.add(line.strip());
            }
        }
        // a nested type is part of the surface only when every type around it is
        Map<String, List<String>> visible = new LinkedHashMap<>();
        for (Map.Entry<String, List<String>> e : types.entrySet()) {
            String name = e.getKey();
            boolean reachable = true;
            for (int i = name.indexOf('$'); i >= 0; i = name.indexOf('$', i + 1)) {
                reachable &= types.containsKey(name.substring(0, i));
            }
            if (reachable) {
                visible.put(name, e.getValue());
            }
        }
        StringBuilder sb = new StringBuilder();
        for (List<String> block : visible.values()) {
            sb.append(block.get(0)).append('\n');
            for (String member : block.subList(1, block.size())) {
                sb.append("  ").append(member).append('\n');
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    private static List<String> prepend(String header, List<String> members) {
        List<String> out = new ArrayList<>(members.size() + 1);
        out.add(header);
        out.addAll(members);
        return out;
    }

    /** The binary name in a javap header: the token after class, interface, enum or record. */
    static String typeName(String header) {
        String[] words = header.split(" ");
        for (int i = 0; i < words.length - 1; i++) {
            if (words[i].equals("class") || words[i].equals("interface") || words[i].equals("enum")
                    || words[i].equals("record") || words[i].equals("@interface")) {
                String n = words[i + 1];
                int generic = n.indexOf('<');
                return generic < 0 ? n : n.substring(0, generic);
            }
        }
        throw new IllegalStateException("no type name in javap header: " + header);
    }

    /** The lines only in one of the two dumps, each under the type it belongs to. */
    static String difference(String committed, String built) {
        Map<String, List<String>> before = blocks(committed);
        Map<String, List<String>> after = blocks(built);
        TreeMap<String, String> all = new TreeMap<>();
        before.keySet().forEach(k -> all.put(k, k));
        after.keySet().forEach(k -> all.put(k, k));
        StringBuilder sb = new StringBuilder();
        for (String type : all.keySet()) {
            List<String> b = before.getOrDefault(type, List.of());
            List<String> a = after.getOrDefault(type, List.of());
            List<String> removed = b.stream().filter(l -> !a.contains(l)).collect(Collectors.toList());
            List<String> added = a.stream().filter(l -> !b.contains(l)).collect(Collectors.toList());
            if (removed.isEmpty() && added.isEmpty()) {
                continue;
            }
            sb.append("  ").append(type).append('\n');
            removed.forEach(l -> sb.append("  - ").append(l).append('\n'));
            added.forEach(l -> sb.append("  + ").append(l).append('\n'));
        }
        return sb.toString();
    }

    private static Map<String, List<String>> blocks(String dump) {
        Map<String, List<String>> out = new TreeMap<>();
        List<String> current = null;
        for (String line : dump.split("\n")) {
            if (line.isEmpty()) {
                current = null;
            } else if (!line.startsWith("  ")) {
                current = new ArrayList<>();
                current.add(line);
                out.put(typeName(line), current);
            } else if (current != null) {
                current.add(line.strip());
            }
        }
        return out;
    }
}
