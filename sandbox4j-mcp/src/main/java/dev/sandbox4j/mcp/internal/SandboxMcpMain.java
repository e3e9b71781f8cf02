package dev.sandbox4j.mcp.internal;

import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunners;
import dev.sandbox4j.mcp.SandboxMcpServer;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import io.modelcontextprotocol.server.McpSyncServer;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code java -jar sandbox4j-mcp.jar --provider local --egress deny-all}: an MCP server on stdin and
 * stdout until stdin closes. stdout carries only the protocol: the process's {@code System.out} is
 * pointed at stderr before anything else runs, so a stray print of any library cannot corrupt a frame,
 * and logs (slf4j-simple) go to stderr.
 */
public final class SandboxMcpMain {
    /** How long a cancelled call gets to tear its sandbox down once stdin has closed. */
    private static final java.time.Duration TEARDOWN_WAIT = java.time.Duration.ofSeconds(30);

    private SandboxMcpMain() {
    }

    /** The jar's version, from the resource Maven filters at build time. */
    static String version() {
        try (InputStream in = SandboxMcpMain.class.getResourceAsStream("version.properties")) {
            if (in == null) {
                return "unknown";
            }
            java.util.Properties p = new java.util.Properties();
            p.load(in);
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }

    public static void main(String[] args) {
        // the protocol gets the real stdout; everything else printing to System.out lands on stderr
        OutputStream protocol = new FileOutputStream(FileDescriptor.out);
        PrintStream err = System.err;
        System.setOut(err);
        defaultProperty("org.slf4j.simpleLogger.logFile", "System.err");
        defaultProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        defaultProperty("org.slf4j.simpleLogger.log.dev.sandbox4j.mcp", "info");
        System.exit(run(args, new FileInputStream(FileDescriptor.in), protocol, err));
    }

    /** {@code auto} is the embedded runner that works here (bubblewrap, else Docker), as in the CLI; any other name a provider. */
    static SandboxRunner runner(String provider, java.util.Map<String, String> env) {
        return "auto".equals(provider) ? SandboxRunners.auto(env) : SandboxRunners.byName(provider, env);
    }

    /** The whole command; returns the exit status. */
    static int run(String[] args, InputStream in, OutputStream out, PrintStream err) {
        McpOptions options;
        try {
            options = McpOptions.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("sandbox4j-mcp: " + e.getMessage() + " (see --help)");
            return 2;
        }
        if (options.help) {
            err.print(McpOptions.USAGE);
            return 0;
        }
        if (options.version) {
            // stderr like --help: stdout is the protocol's alone
            err.println("sandbox4j-mcp " + version());
            return 0;
        }
        Logger log = LoggerFactory.getLogger(SandboxMcpMain.class);
        SandboxRunner runner;
        try {
            runner = runner(options.provider, System.getenv());
        } catch (RuntimeException e) {
            // sandbox4j's messages hold no secrets by contract (they name variables, never values)
            err.println("sandbox4j-mcp: provider " + options.provider + ": " + e.getMessage());
            return 2;
        }
        try (runner) {
            SandboxMcpServer server;
            try {
                server = SandboxMcpServer.builder(runner)
                        .version(version())
                        .egress(options.egress)
                        .defaultBudget(options.timeout)
                        .maxBudget(options.maxTimeout)
                        .outputLimit(options.outputLimit)
                        .build();
            } catch (UnsupportedPolicyException e) {
                err.println("sandbox4j-mcp: " + e.getMessage());
                return 2;
            }
            CountDownLatch ended = new CountDownLatch(1);
            McpSyncServer running = server.serve(new EndAware(in, ended), out);
            log.info("sandbox4j MCP server ready on stdio: {}", server.tool());
            try {
                ended.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            log.info("stdin closed; stopping");
            try {
                // the gate has cancelled every running call: each tears its sandbox down before the runner closes
                if (!server.awaitIdle(TEARDOWN_WAIT)) {
                    log.warn("a call was still running when the server stopped");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            running.closeGracefully();
            return 0;
        } catch (SandboxException e) {
            err.println("sandbox4j-mcp: " + e.getClass().getSimpleName() + ": " + e.getMessage());
            return 2;
        } catch (RuntimeException e) {
            err.println("sandbox4j-mcp: unexpected " + e.getClass().getName());
            return 1;
        }
    }

    private static void defaultProperty(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }

    /** Counts down when the client closes stdin (end of stream or a read error): the server's cue to stop. */
    private static final class EndAware extends FilterInputStream {
        private final CountDownLatch ended;

        EndAware(InputStream in, CountDownLatch ended) {
            super(in);
            this.ended = ended;
        }

        @Override
        public int read() throws IOException {
            return check(() -> super.read());
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            return check(() -> super.read(b, off, len));
        }

        private int check(IoRead r) throws IOException {
            try {
                int n = r.read();
                if (n < 0) {
                    ended.countDown();
                }
                return n;
            } catch (IOException e) {
                ended.countDown();
                throw e;
            }
        }

        @Override
        public void close() throws IOException {
            ended.countDown();
            super.close();
        }
    }

    private interface IoRead {
        int read() throws IOException;
    }
}
