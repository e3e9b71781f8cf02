package dev.sandbox4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.SandboxRunners;
import dev.sandbox4j.api.SandboxRunnerProvider;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's provider table names exactly the provider modules of the build (every module that
 * registers a {@link SandboxRunnerProvider}), and the CLI's --help every provider the CLI bundles (all
 * of them but sandbox-kubernetes, whose fabric8 client is not shipped in the CLI jar), so the docs
 * cannot drift from the code again.
 */
class ReadmeProvidersTest {
    private static final Pattern ROW = Pattern.compile("(?m)^\\| `sandbox-([a-z0-9]+)` \\|");

    private static Set<String> codeProviders() {
        Set<String> names = new TreeSet<>();
        for (SandboxRunnerProvider p : SandboxRunners.providers()) {
            names.add(p.name());
        }
        return names;
    }

    /** The build's provider modules: those registering a provider, named by the module's suffix. */
    private static Set<String> moduleProviders() throws IOException {
        Set<String> names = new TreeSet<>();
        try (var modules = Files.list(Path.of(".."))) {
            for (Path m : modules.toList()) {
                String dir = m.getFileName().toString();
                if (dir.startsWith("sandbox-") && Files.exists(m.resolve(
                        "src/main/resources/META-INF/services/dev.sandbox4j.api.SandboxRunnerProvider"))) {
                    names.add(dir.substring("sandbox-".length()));
                }
            }
        }
        return names;
    }

    @Test
    void theCliBundlesEveryProviderButKubernetes() throws IOException {
        Set<String> expected = new TreeSet<>(moduleProviders());
        expected.remove("kubernetes");
        assertEquals(expected, codeProviders(), "the providers on the CLI's classpath");
    }

    @Test
    void theReadmesProviderTableListsEveryProviderAndNoOther() throws IOException {
        String readme = Files.readString(Path.of("..", "README.md"), StandardCharsets.UTF_8);
        int table = readme.indexOf("| Module | Configuration | A small run | Egress it enforces exactly |");
        assertTrue(table >= 0, "README.md has the provider table");
        int end = readme.indexOf("\n\n", table);
        Matcher m = ROW.matcher(readme.substring(table, end < 0 ? readme.length() : end));
        Set<String> documented = new TreeSet<>();
        while (m.find()) {
            documented.add(m.group(1));
        }
        assertEquals(moduleProviders(), documented, "README's provider table against the build's provider modules");
    }

    @Test
    void theHelpAndTheReadmesProviderOptionNameEveryProvider() throws IOException {
        String readme = Files.readString(Path.of("..", "README.md"), StandardCharsets.UTF_8);
        String help = dev.sandbox4j.cli.internal.CliOptions.USAGE;
        for (String name : codeProviders()) {
            assertTrue(Pattern.compile("--provider NAME[^\\n]*(\\n {20,}[^\\n]*)*\\b" + name + "\\b").matcher(help).find(),
                    "--help names " + name + ":\n" + help);
        }
        assertTrue(List.of(readme.split("\n")).stream().anyMatch(l -> l.startsWith("| `--provider NAME` |")
                && codeProviders().stream().allMatch(l::contains)), "the README's --provider row names every provider");
    }

    @Test
    void theSpringSectionNamesEveryProviderAndAuto() throws IOException {
        String readme = Files.readString(Path.of("..", "README.md"), StandardCharsets.UTF_8);
        int at = readme.indexOf("# local (the default)");
        assertTrue(at >= 0, "the Spring properties snippet lists the providers");
        String comment = readme.substring(at, readme.indexOf("sandbox4j.provider=", at));
        for (String name : codeProviders()) {
            assertTrue(comment.contains(name), "the Spring section names " + name + ": " + comment);
        }
        assertTrue(comment.contains("auto"), comment);
        int xml = readme.indexOf("<!-- the provider: sandbox-local");
        String modules = readme.substring(xml, readme.indexOf("-->", xml));
        for (String name : codeProviders()) {
            assertTrue(modules.contains("sandbox-" + name), "the Spring dependency snippet names sandbox-" + name + ": " + modules);
        }
    }
}
