package dev.sandbox4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The code in the README's "Use it from your agent" section is the code of this module, not a copy
 * typed by hand: every region marked {@code tag::NAME[]} ... {@code end::NAME[]} in src/main must
 * appear in that section as one fenced block, verbatim (less the region's common indent), and every
 * fenced block of the section must be such a region. Editing either side alone fails this test.
 */
class ReadmeSnippetsTest {
    static final String SECTION = "## Use it from your agent";
    // comments in Java, properties and XML (the module's pom.xml holds the dependency snippets)
    private static final Pattern TAG = Pattern.compile("^\\s*(?://|#|<!--)\\s*tag::([a-z0-9-]+)\\[\\]\\s*(?:-->)?\\s*$");
    private static final Pattern END = Pattern.compile("^\\s*(?://|#|<!--)\\s*end::([a-z0-9-]+)\\[\\]\\s*(?:-->)?\\s*$");
    private static final Pattern FENCE = Pattern.compile("(?m)^```([a-z]*)\\n(.*?)^```$", Pattern.DOTALL);

    /** This module's copy of the section: the text to paste into the repository's README.md. */
    @Test
    void theModulesReadmeSectionIsTheSourceRegions() throws IOException {
        check(Path.of("README.md"));
    }

    /** The repository's README.md carries the same section; removing or retyping it fails here. */
    @Test
    void theRepositoryReadmeSectionIsTheSourceRegions() throws IOException {
        Path readme = Path.of("..", "README.md");
        assertTrue(read(readme).contains("\n" + SECTION + "\n"),
                "../README.md has no '" + SECTION + "' section: paste the one from examples/README.md");
        check(readme);
    }

    @Test
    void regionsAreFoundAndCutExactly() {
        Map<String, String> regions = new TreeMap<>();
        collect(List.of("class A {", "    // tag::x[]", "    void f() {", "        g();", "    }", "    // end::x[]", "}"),
                "A.java", regions);
        assertEquals(Map.of("x", "void f() {\n    g();\n}\n"), regions);
        assertFalse(blocks("text\n```java\nint a;\n```\nmore\n```properties\nk=v\n```\n").isEmpty());
        assertEquals(List.of("int a;\n", "k=v\n"), blocks("text\n```java\nint a;\n```\nmore\n```properties\nk=v\n```\n"));
    }

    private static void check(Path readme) throws IOException {
        Map<String, String> regions = regions();
        assertTrue(regions.keySet().containsAll(List.of("langchain4j", "langchain4j-wiring", "spring-ai",
                "spring-ai-config", "spring-ai-chat", "spring-ai-properties", "failover")), "regions found: " + regions.keySet());
        String section = section(read(readme), readme);
        List<String> blocks = blocks(section);
        List<String> problems = new ArrayList<>();
        regions.forEach((name, code) -> {
            long n = blocks.stream().filter(code::equals).count();
            if (n != 1) {
                problems.add("region '" + name + "' appears " + n + " times as a block in " + readme
                        + "; it is:\n" + code);
            }
        });
        for (String block : blocks) {
            if (!regions.containsValue(block)) {
                problems.add("a block in " + readme + " is no source region (edit the source, then copy):\n" + block);
            }
        }
        if (!problems.isEmpty()) {
            fail(String.join("\n\n", problems));
        }
    }

    private static String section(String readme, Path path) {
        int start = readme.indexOf("\n" + SECTION + "\n");
        assertTrue(start >= 0, path + " has no '" + SECTION + "' section");
        int end = readme.indexOf("\n## ", start + SECTION.length() + 1);
        return readme.substring(start, end < 0 ? readme.length() : end + 1);
    }

    static List<String> blocks(String markdown) {
        List<String> blocks = new ArrayList<>();
        Matcher m = FENCE.matcher(markdown);
        while (m.find()) {
            blocks.add(m.group(2));
        }
        return blocks;
    }

    private static Map<String, String> regions() throws IOException {
        Map<String, String> regions = new TreeMap<>();
        try (Stream<Path> files = Files.walk(Path.of("src", "main"))) {
            for (Path f : files.filter(Files::isRegularFile).sorted().toList()) {
                collect(Files.readAllLines(f, StandardCharsets.UTF_8), f.toString(), regions);
            }
        }
        collect(Files.readAllLines(Path.of("pom.xml"), StandardCharsets.UTF_8), "pom.xml", regions);
        return regions;
    }

    private static void collect(List<String> lines, String file, Map<String, String> regions) {
        String open = null;
        List<String> body = new ArrayList<>();
        for (String line : lines) {
            Matcher tag = TAG.matcher(line);
            Matcher end = END.matcher(line);
            if (tag.matches()) {
                assertEquals(null, open, file + ": region '" + tag.group(1) + "' opens inside '" + open + "'");
                open = tag.group(1);
                body.clear();
            } else if (end.matches()) {
                assertEquals(open, end.group(1), file + ": end::" + end.group(1) + " does not close the open region");
                assertFalse(regions.containsKey(open), "region '" + open + "' is defined twice");
                regions.put(open, dedent(body));
                open = null;
            } else if (open != null) {
                body.add(line);
            }
        }
        assertEquals(null, open, file + ": region '" + open + "' is never closed");
    }

    private static String dedent(List<String> lines) {
        int indent = lines.stream().filter(l -> !l.isBlank())
                .mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
        StringBuilder sb = new StringBuilder();
        for (String l : lines) {
            sb.append(l.isBlank() ? "" : l.substring(indent)).append('\n');
        }
        return sb.toString();
    }

    private static String read(Path p) throws IOException {
        return Files.readString(p, StandardCharsets.UTF_8);
    }
}
