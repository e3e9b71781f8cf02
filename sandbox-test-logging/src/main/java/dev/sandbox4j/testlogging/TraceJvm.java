package dev.sandbox4j.testlogging;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.Enumeration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs a main class in a child JVM with every logger at TRACE and keeps everything that JVM writes, for
 * the tests that look for secrets in log output (issue 28 item 8).
 *
 * <p>Why a child JVM: slf4j-simple fixes a logger's level when the logger is made, and JUL's console
 * handler keeps the {@code System.err} it saw first, so a test JVM cannot be turned to TRACE, nor have
 * all of its output swapped into a buffer, once anything has logged. The child starts at TRACE: slf4j-simple's
 * default level and every per-logger level named in a {@code simplelogger.properties} on the class path
 * set to {@code trace}, and java.util.logging (gRPC, OkHttp and the JDK log there) at {@code ALL} to
 * {@code System.err}. Its stdout and stderr together are the capture: whatever framework a library logs
 * through, a line the process writes is seen.
 *
 * <p>A capture that cannot see a line would make the test unable to fail, so the child's main calls
 * {@link #plantCanaries()} first: a random canary logged at slf4j TRACE and at JUL FINEST, which
 * {@link Result#assertClean} requires to be in the capture. Tests may require more lines of their own
 * (a library's own logger, proved to reach the capture) with {@link Result#assertContains}.
 *
 * <p>What counts as a leak ({@link Result#assertClean}): a secret as text, as hex in either case (frame
 * loggers hex-dump payloads), URL-encoded or base64-encoded, and any JWT (or its first bytes as hex),
 * whoever minted it. Not seen: a secret split over lines of a pretty hex dump, or encoded some other way.
 */
public final class TraceJvm {
    /** The environment variable that carries the canary to the child. */
    public static final String CANARY_VARIABLE = "SANDBOX4J_TRACE_CANARY";
    private static final long MAX_OUTPUT = 64L << 20;
    private static final int MIN_SECRET = 8;
    /** A whole JWT: base64url of a JSON header, a payload and a signature. */
    private static final Pattern JWT = Pattern.compile("eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}");
    /** {@code {"alg":} as a JWT header begins, in base64url and in hex: a token's first bytes in a dump. */
    private static final String JWT_START = "eyJhbGciOi";
    private static final String JWT_START_HEX = HexFormat.of().formatHex(JWT_START.getBytes(StandardCharsets.US_ASCII));

    private TraceJvm() {
    }

    /**
     * Runs {@code main} with {@code args} in a child JVM on this JVM's class path, with {@code env}
     * added to this JVM's environment, every logger at TRACE; waits at most {@code limit}. The capture
     * is also written to {@code trace-<name>.log} next to the module's {@code test-debug.log}.
     */
    public static Result run(String name, Class<?> main, Map<String, String> env, List<String> args, Duration limit) {
        String canary = "canary-" + HexFormat.of().formatHex(new SecureRandom().generateSeed(8));
        Path julConfig = null;
        try {
            julConfig = Files.createTempFile("sandbox4j-trace-jul-", ".properties");
            Files.writeString(julConfig, String.join("\n",
                    "handlers=java.util.logging.ConsoleHandler",
                    ".level=ALL",
                    "java.util.logging.ConsoleHandler.level=ALL",
                    "java.util.logging.ConsoleHandler.formatter=java.util.logging.SimpleFormatter",
                    "java.util.logging.SimpleFormatter.format=[JUL %4$s] %3$s - %5$s%6$s%n", ""));
            List<String> command = new ArrayList<>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            command.add("-cp");
            command.add(System.getProperty("java.class.path"));
            command.add("-Djava.util.logging.config.file=" + julConfig);
            command.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=trace");
            command.add("-Dorg.slf4j.simpleLogger.logFile=System.err");
            command.add("-Dorg.slf4j.simpleLogger.cacheOutputStream=false");
            for (String logger : configuredLoggers()) {
                command.add("-D" + logger + "=trace"); // a system property outranks the file's entry
            }
            command.add(main.getName());
            command.addAll(args);
            ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
            pb.environment().putAll(env);
            pb.environment().put(CANARY_VARIABLE, canary);
            Process p = pb.start();
            p.getOutputStream().close();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            Thread reader = new Thread(() -> copy(p.getInputStream(), out), "trace-jvm-" + name);
            reader.setDaemon(true);
            reader.start();
            boolean exited = p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS);
            if (!exited) {
                p.destroyForcibly().waitFor();
            }
            reader.join();
            String text;
            synchronized (out) {
                text = out.toString(StandardCharsets.UTF_8);
            }
            Path file = logDir().resolve("trace-" + name + ".log");
            Files.writeString(file, text);
            if (!exited) {
                throw new AssertionError("the child JVM did not end within " + limit + "; its output is in " + file);
            }
            return new Result(name, text, p.exitValue(), canary, file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        } finally {
            if (julConfig != null) {
                try {
                    Files.deleteIfExists(julConfig);
                } catch (IOException ignored) {
                    // a temp file
                }
            }
        }
    }

    /**
     * In the child, first thing: logs the canary at slf4j TRACE and JUL FINEST, and fails unless slf4j
     * is bound to slf4j-simple (the levels set by {@link #run} are slf4j-simple's).
     */
    public static void plantCanaries() {
        String canary = System.getenv(CANARY_VARIABLE);
        if (canary == null) {
            throw new IllegalStateException(CANARY_VARIABLE + " is not set: start this main with TraceJvm.run");
        }
        String binding = org.slf4j.LoggerFactory.getILoggerFactory().getClass().getName();
        if (!binding.startsWith("org.slf4j.simple.")) {
            throw new IllegalStateException("slf4j is bound to " + binding + ", not slf4j-simple: the TRACE levels do not apply");
        }
        org.slf4j.LoggerFactory.getLogger("dev.sandbox4j.testlogging.Canary").trace("slf4j-trace {}", canary);
        java.util.logging.Logger.getLogger("dev.sandbox4j.testlogging.Canary").finest("jul-finest " + canary);
    }

    /** The canary the child was given, for a test's own planted lines. */
    public static String canary() {
        return System.getenv(CANARY_VARIABLE);
    }

    /** Every {@code org.slf4j.simpleLogger.log.*} key in a {@code simplelogger.properties} on the class path. */
    private static Collection<String> configuredLoggers() throws IOException {
        TreeSet<String> keys = new TreeSet<>();
        ClassLoader cl = Thread.currentThread().getContextClassLoader();
        Enumeration<URL> files = (cl == null ? ClassLoader.getSystemClassLoader() : cl).getResources("simplelogger.properties");
        while (files.hasMoreElements()) {
            Properties p = new Properties();
            try (InputStream in = files.nextElement().openStream()) {
                p.load(in);
            }
            for (String k : p.stringPropertyNames()) {
                if (k.startsWith("org.slf4j.simpleLogger.log.")) {
                    keys.add(k);
                }
            }
        }
        return keys;
    }

    private static Path logDir() throws IOException {
        String debugLog = System.getProperty("sandbox4j.test.logFile", "");
        Path dir = debugLog.isBlank() ? Path.of(System.getProperty("java.io.tmpdir"))
                : Path.of(debugLog).toAbsolutePath().getParent();
        Files.createDirectories(dir);
        return dir;
    }

    private static void copy(InputStream in, ByteArrayOutputStream out) {
        byte[] buf = new byte[8192];
        try (in) {
            int n;
            while ((n = in.read(buf)) > 0) {
                synchronized (out) {
                    if (out.size() < MAX_OUTPUT) {
                        out.write(buf, 0, n); // past the cap the child is drained, not kept
                    }
                }
            }
        } catch (IOException e) {
            // the child ended: what was read is the capture
        }
    }

    /** What a child JVM wrote, stdout and stderr interleaved as written. */
    public static final class Result {
        private final String name;
        private final String output;
        private final int exitCode;
        private final String canary;
        private final Path file;

        private Result(String name, String output, int exitCode, String canary, Path file) {
            this.name = name;
            this.output = output;
            this.exitCode = exitCode;
            this.canary = canary;
            this.file = file;
        }

        public String output() {
            return output;
        }

        public int exitCode() {
            return exitCode;
        }

        /** Lines captured. */
        public long lines() {
            return output.lines().count();
        }

        /** Lines holding {@code text}. */
        public long linesWith(String text) {
            return output.lines().filter(l -> l.contains(text)).count();
        }

        /** Fails unless the capture holds {@code text} (a line the test planted or expects). */
        public Result assertContains(String text) {
            if (!output.contains(text)) {
                throw new AssertionError(name + ": the capture (" + file + ") lacks " + text);
            }
            return this;
        }

        /**
         * Fails unless the child exited with 0, the canaries reached the capture, and none of
         * {@code secrets} (in any of the forms this class looks for) nor any JWT is in it. Secrets
         * shorter than 8 characters are refused: they would match by chance.
         */
        public Result assertClean(Collection<String> secrets) {
            if (exitCode != 0) {
                throw new AssertionError(name + ": the child JVM exited with " + exitCode + "; the last lines:\n" + tail(40));
            }
            assertContains("slf4j-trace " + canary);
            assertContains("jul-finest " + canary);
            Map<String, String> forms = new LinkedHashMap<>();
            for (String s : secrets) {
                if (s == null || s.length() < MIN_SECRET) {
                    throw new IllegalArgumentException("a secret to look for must have at least " + MIN_SECRET + " characters");
                }
                byte[] b = s.getBytes(StandardCharsets.UTF_8);
                String hex = HexFormat.of().formatHex(b);
                forms.putIfAbsent(s, "as text");
                forms.putIfAbsent(hex, "as hex");
                forms.putIfAbsent(hex.toUpperCase(Locale.ROOT), "as HEX");
                forms.putIfAbsent(URLEncoder.encode(s, StandardCharsets.UTF_8), "URL-encoded");
                // the encoding of the whole bytes, less its last (partial) group: stable whatever follows
                String b64 = Base64.getEncoder().withoutPadding().encodeToString(b);
                forms.putIfAbsent(b64.substring(0, b64.length() - b64.length() % 4), "base64");
                String b64url = Base64.getUrlEncoder().withoutPadding().encodeToString(b);
                forms.putIfAbsent(b64url.substring(0, b64url.length() - b64url.length() % 4), "base64url");
            }
            forms.putIfAbsent(JWT_START, "a JWT header");
            forms.putIfAbsent(JWT_START_HEX, "a JWT header as hex");
            forms.putIfAbsent(JWT_START_HEX.toUpperCase(Locale.ROOT), "a JWT header as HEX");
            List<String> hits = new ArrayList<>();
            String[] lines = output.split("\n", -1);
            for (int i = 0; i < lines.length; i++) {
                String line = lines[i];
                for (Map.Entry<String, String> f : forms.entrySet()) {
                    if (f.getKey().length() >= MIN_SECRET && line.contains(f.getKey())) {
                        hits.add("line " + (i + 1) + " (a secret " + f.getValue() + "): " + cut(line));
                    }
                }
                Matcher m = JWT.matcher(line);
                if (m.find()) {
                    hits.add("line " + (i + 1) + " (a JWT): " + cut(line));
                }
            }
            if (!hits.isEmpty()) {
                throw new AssertionError(name + ": " + hits.size() + " leaks in " + lines() + " lines captured at TRACE ("
                        + file + "), the first:\n  " + String.join("\n  ", hits.subList(0, Math.min(20, hits.size()))));
            }
            return this;
        }

        /** Fails if a line matches {@code shape}: a provider's token format, whose values the test cannot know. */
        public Result assertNoMatch(Pattern shape, String what) {
            String[] lines = output.split("\n", -1);
            for (int i = 0; i < lines.length; i++) {
                if (shape.matcher(lines[i]).find()) {
                    throw new AssertionError(name + ": " + what + " at line " + (i + 1) + " of " + file + ": " + cut(lines[i]));
                }
            }
            return this;
        }

        private String tail(int n) {
            List<String> all = output.lines().toList();
            return String.join("\n", all.subList(Math.max(0, all.size() - n), all.size()));
        }

        private static String cut(String line) {
            return line.length() <= 400 ? line : line.substring(0, 400) + "...";
        }

        @Override
        public String toString() {
            return "TraceJvm.Result[" + name + ", exit " + exitCode + ", " + lines() + " lines, " + file + "]";
        }
    }
}
