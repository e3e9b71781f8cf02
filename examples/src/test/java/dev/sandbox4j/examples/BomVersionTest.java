package dev.sandbox4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's BOM snippet (this module's spring-ai-config region) names the BOM's version as a literal,
 * because {@code ${project.version}} in a user's POM is the user's own version. The literal must be this
 * build's version, so a release that forgets it fails here.
 */
class BomVersionTest {
    @Test
    void theBomSnippetNamesThisBuildsVersion() throws IOException {
        String pom = Files.readString(Path.of("pom.xml"), StandardCharsets.UTF_8);
        Matcher parent = Pattern.compile("(?s)<parent>.*?<version>([^<]+)</version>.*?</parent>").matcher(pom);
        assertTrue(parent.find(), "the parent's version");
        Matcher bom = Pattern.compile("(?s)<artifactId>sandbox4j-bom</artifactId>\\s*(?:<!--.*?-->\\s*)?<version>([^<]+)</version>")
                .matcher(pom);
        assertTrue(bom.find(), "the BOM import");
        assertEquals(parent.group(1), bom.group(1), "the README's BOM version is this build's");
        String readme = Files.readString(Path.of("..", "README.md"), StandardCharsets.UTF_8);
        assertTrue(!readme.contains("<version>${project.version}</version>"), "no ${project.version} in the README");
    }
}
