package dev.sandbox4j.mcp.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The client configuration the README shows is valid JSON and a command line this server accepts. */
class ReadmeMcpSectionTest {
    private static final String SECTION = "## Use it from an MCP client";

    @Test
    void theReadmesMcpConfigurationStartsThisJarWithAValidPolicy() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"), StandardCharsets.UTF_8);
        int start = readme.indexOf("\n" + SECTION + "\n");
        assertTrue(start >= 0, "README.md has no '" + SECTION + "' section");
        int end = readme.indexOf("\n## ", start + SECTION.length() + 1);
        String section = readme.substring(start, end < 0 ? readme.length() : end);
        Matcher m = Pattern.compile("(?s)```json\n(.*?)```").matcher(section);
        assertTrue(m.find(), "the section shows a JSON configuration");

        JsonNode server = new ObjectMapper().readTree(m.group(1)).at("/mcpServers/sandbox4j");
        assertEquals("java", server.path("command").asText());
        List<String> args = new ArrayList<>();
        server.path("args").forEach(a -> args.add(a.asText()));
        assertEquals("-jar", args.get(0));
        assertTrue(args.get(1).endsWith("/sandbox4j-mcp.jar"), args.get(1));
        McpOptions options = McpOptions.parse(args.subList(2, args.size()).toArray(String[]::new));
        assertEquals("local", options.provider);
        assertTrue(options.egress.isDenyAll());
        for (String option : List.of("--provider", "--egress", "--timeout", "--max-timeout", "--output-limit")) {
            assertTrue(section.contains("`" + option + "`"), "the README names " + option);
            assertTrue(McpOptions.USAGE.contains("  " + option + " "), "--help names " + option);
        }
    }
}
