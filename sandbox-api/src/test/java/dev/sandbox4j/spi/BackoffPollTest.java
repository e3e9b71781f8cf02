package dev.sandbox4j.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** {@link Backoff#poll} on an injected clock and sleeper: no real time passes. */
class BackoffPollTest {
    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final List<Duration> slept = new ArrayList<>();
    private final Backoff backoff = Backoff.builder().nanoClock(now::get).sleeper(d -> {
        slept.add(d);
        now.addAndGet(d.toNanos());
    }).build();

    @Test
    void looksAtOnceThenWithGrowingCappedDelaysUntilTheProbeAnswers() throws Exception {
        List<Integer> looks = new ArrayList<>();
        Optional<String> v = backoff.poll(Duration.ofSeconds(60), Duration.ofMillis(100), Duration.ofMillis(300), look -> {
            looks.add(look);
            return look == 5 ? Optional.of("ready") : Optional.empty();
        });
        assertEquals(Optional.of("ready"), v);
        assertEquals(List.of(1, 2, 3, 4, 5), looks);
        // 100, then 1.5x + 1 ms: 151, 227.5; then capped at 300
        assertEquals(List.of(Duration.ofMillis(100), Duration.ofMillis(151), Duration.ofNanos(227_500_000L),
                Duration.ofMillis(300)), slept);
    }

    @Test
    void endsEmptyWhenTheNextLookWouldStartAfterTheTimeout() throws Exception {
        long start = now.get();
        List<Long> lookTimes = new ArrayList<>();
        Optional<Object> v = backoff.poll(Duration.ofMillis(1000), Duration.ofMillis(200), Duration.ofMillis(200), look -> {
            lookTimes.add(now.get() - start);
            return Optional.empty();
        });
        assertTrue(v.isEmpty());
        assertEquals(List.of(0L, 200_000_000L, 400_000_000L, 600_000_000L, 800_000_000L, 1_000_000_000L), lookTimes);
        assertTrue(lookTimes.stream().allMatch(t -> t <= 1_000_000_000L), "no look after the timeout: " + lookTimes);
    }

    @Test
    void aZeroTimeoutStillLooksOnce() throws Exception {
        int[] looks = {0};
        assertTrue(backoff.poll(Duration.ZERO, Duration.ofMillis(10), Duration.ofMillis(10), look -> {
            looks[0]++;
            return Optional.empty();
        }).isEmpty());
        assertEquals(1, looks[0]);
        assertTrue(slept.isEmpty());
    }

    @Test
    void aProbeThatThrowsEndsThePoll() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> backoff.poll(Duration.ofSeconds(5),
                Duration.ofMillis(10), Duration.ofMillis(10), look -> {
                    if (look == 2) {
                        throw new IllegalStateException("failed state");
                    }
                    return Optional.empty();
                }));
        assertEquals("failed state", e.getMessage());
        assertEquals(1, slept.size());
    }
}
