package dev.sandbox4j.docker.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.spi.Backoff;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link DockerDriver#exitCode}: the wait for an exec's exit code after its stream ended goes through the
 * driver's {@link Backoff#poll}, on an injected clock and sleeper (no real time passes), against a scripted
 * engine on loopback that answers the exec inspect.
 */
class DockerDriverExitCodeTest {
    private static final long START = 1_000_000_000L;
    private final AtomicLong now = new AtomicLong(START);
    private final List<Duration> slept = new CopyOnWriteArrayList<>();
    /** The fake clock at each inspect the engine answered, from the start of the wait. */
    private final List<Long> looks = new CopyOnWriteArrayList<>();
    private final AtomicInteger runningFor = new AtomicInteger();
    private MockWebServer engine;
    private DockerDriver driver;

    @BeforeEach
    void start() throws IOException {
        engine = new MockWebServer();
        engine.setDispatcher(new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest r) {
                String p = r.getUrl().encodedPath().replaceFirst("^/v[0-9.]+", "");
                if (!r.getMethod().equals("GET") || !p.equals("/exec/e1/json")) {
                    return new MockResponse.Builder().code(500).body("{\"message\":\"unexpected " + p + "\"}").build();
                }
                looks.add(now.get() - START);
                String body = runningFor.getAndDecrement() > 0 ? "{\"Running\":true,\"ExitCode\":0}"
                        : "{\"Running\":false,\"ExitCode\":7}";
                return new MockResponse.Builder().code(200).setHeader("Content-Type", "application/json").body(body).build();
            }
        });
        engine.start();
        DockerSettings s = new DockerSettings(DockerSettings.Endpoint.parse("tcp://127.0.0.1:" + engine.getPort()), "img",
                "1000:1000", "0:0", "bridge", 64 << 20, 64 << 20, 64, 65536, Duration.ofSeconds(2), Duration.ofSeconds(2));
        Backoff fake = Backoff.builder().nanoClock(now::get).sleeper(d -> {
            slept.add(d);
            now.addAndGet(d.toNanos());
        }).build();
        driver = new DockerDriver(s, b -> { }, fake);
    }

    @AfterEach
    void stop() {
        engine.close();
    }

    @Test
    void anExitCodeTheEngineRecordsAfterAFewInspectsIsReturned() throws Exception {
        runningFor.set(3); // still running on the first three inspects
        assertEquals(7, driver.exitCode("e1"));
        assertEquals(4, looks.size(), "looks: " + looks);
        // at once, then 1 ms growing by 1.5x + 1 ms, all on the injected sleeper
        assertEquals(List.of(Duration.ofMillis(1), Duration.ofNanos(2_500_000L), Duration.ofNanos(4_750_000L)), slept);
        assertEquals(List.of(0L, 1_000_000L, 3_500_000L, 8_250_000L), looks);
    }

    @Test
    void anExitCodeNeverRecordedEndsNullAtTheFiveSecondBound() throws Exception {
        runningFor.set(Integer.MAX_VALUE);
        assertNull(driver.exitCode("e1"));
        long last = looks.get(looks.size() - 1);
        assertTrue(last <= 5_000_000_000L, "no inspect after the bound: " + last);
        assertTrue(last > 5_000_000_000L - 50_000_000L, "the wait went on to the bound (the next delay would pass it): " + last);
        assertEquals(Duration.ofMillis(1), slept.get(0));
        assertTrue(slept.stream().allMatch(d -> d.compareTo(Duration.ofMillis(50)) <= 0), "delays capped at 50 ms: " + slept);
        assertEquals(Duration.ofMillis(50), slept.get(slept.size() - 1));
        assertEquals(looks.size() - 1, slept.size(), "one delay between two inspects, none after the last");
    }
}
