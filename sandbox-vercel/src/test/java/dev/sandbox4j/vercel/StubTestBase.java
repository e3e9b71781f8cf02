package dev.sandbox4j.vercel;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.Consumer;
import mockwebserver3.MockWebServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** A MockWebServer playing Vercel, and runners pointed at it. */
abstract class StubTestBase {
    /** 40 characters, like the token the recordings masked. */
    static final String TOKEN = "vcp_TESTTOKEN_0123456789abcdefghijklmnopq";
    static final String TEAM = "team_FAKE123";
    static final String PROJECT = "prj_FAKE456";

    MockWebServer server;
    VercelStub stub;
    private PrintStream originalErr;
    private ByteArrayOutputStream capturedErr;

    @BeforeEach
    void startServer() throws IOException {
        stub = new VercelStub();
        server = new MockWebServer();
        server.setDispatcher(stub);
        server.start();
    }

    @AfterEach
    void stopServer() {
        stub.release.countDown();
        server.close();
        if (originalErr != null) {
            System.setErr(originalErr);
        }
    }

    VercelSandboxRunner runner() {
        return runner(b -> { });
    }

    VercelSandboxRunner runner(Consumer<VercelSandboxRunner.Builder> tweak) {
        VercelSandboxRunner.Builder b = VercelSandboxRunner.builder()
                .token(TOKEN).teamId(TEAM).projectId(PROJECT)
                .baseUrl(server.url("/api").toString())
                .retryBaseDelay(Duration.ofMillis(1))
                .killTimeout(Duration.ofSeconds(5))
                .lostCreateWindow(Duration.ofMillis(1)) // one lookup round, as scripted
                .teardownTimeout(Duration.ofSeconds(5));
        tweak.accept(b);
        return b.build();
    }

    /** Everything logged from now on (slf4j-simple writes to System.err, at debug for sandbox4j). */
    void captureLogs() {
        originalErr = System.err;
        capturedErr = new ByteArrayOutputStream();
        System.setErr(new PrintStream(capturedErr, true, StandardCharsets.UTF_8));
    }

    String logs() {
        System.err.flush();
        return capturedErr.toString(StandardCharsets.UTF_8);
    }
}
