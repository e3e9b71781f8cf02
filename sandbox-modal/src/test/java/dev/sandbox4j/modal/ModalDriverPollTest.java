package dev.sandbox4j.modal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.modal.internal.proto.ModalApi;
import dev.sandbox4j.spi.Backoff;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The driver's waits on the backoff policy's clock: here a fake one that only the (recording) sleeper
 * moves, so the waits take no real time and their bounds are exact.
 */
class ModalDriverPollTest extends ModalTestBase {
    private static final long START = 1_000_000_000L;
    private final AtomicLong now = new AtomicLong(START);
    /** The fake clock at each SandboxGetTaskId the fake answered. */
    private final List<Long> taskPolls = new CopyOnWriteArrayList<>();

    @Override
    Backoff backoff() {
        return super.backoff().toBuilder().nanoClock(now::get).sleeper(d -> {
            sleeps.add(d);
            now.addAndGet(d.toNanos());
        }).build();
    }

    private void v1Runner(Duration scheduleTimeout) {
        runner.close();
        runner = builder().sandboxV2(false).scheduleTimeout(scheduleTimeout).maxCreateAttempts(1).build();
    }

    /** The fake answers the task on poll {@code scheduledOn} (never for 0), and notes the clock at each poll. */
    private void scheduleOn(int scheduledOn) {
        fake.taskIdAnswer = n -> {
            taskPolls.add(now.get() - START);
            ModalApi.SandboxGetTaskIdResponse.Builder b = ModalApi.SandboxGetTaskIdResponse.newBuilder();
            return n == scheduledOn ? b.setTaskId(FakeModal.TASK_V1) : b;
        };
    }

    /** The polls' clock readings for a failure message: the first and last few when there are many. */
    private String shown() {
        List<Long> p = List.copyOf(taskPolls);
        return p.size() <= 30 ? p.toString()
                : p.size() + " polls " + p.subList(0, 10) + " ... " + p.subList(p.size() - 10, p.size());
    }

    @Test
    void aV1SandboxScheduledOnTheFourthPollRunsAfterThreeHalfSecondDelays() {
        v1Runner(Duration.ofSeconds(60));
        scheduleOn(4);
        long before = now.get() - START;
        assertEquals(3, runner.run(RunRequest.python("print(1)")).exitCode().getAsInt());
        assertEquals(4, fake.calls("SandboxGetTaskId").size());
        long first = taskPolls.get(0);
        assertEquals(before, first, "the first poll at once");
        assertEquals(List.of(first, first + 500_000_000L, first + 1_000_000_000L, first + 1_500_000_000L), taskPolls);
        assertEquals(3, sleeps.stream().filter(d -> d.equals(Duration.ofMillis(500))).count(), "sleeps: " + sleeps);
    }

    @Test
    void aV1SandboxNeverScheduledFailsTheCreateAtTheScheduleTimeoutAndIsTerminated() {
        v1Runner(Duration.ofSeconds(10));
        scheduleOn(0);
        SandboxException e = assertThrows(SandboxException.class, () -> runner.run(RunRequest.python("print(1)")));
        assertTrue(String.valueOf(e.getMessage()).contains("was not scheduled within PT10S"), e.getMessage());
        assertTrue(e.isRetriable());
        // at once, then every 500 ms up to the timeout itself, none after it
        long first = taskPolls.get(0);
        assertEquals(21, taskPolls.size(), "polls: " + shown());
        for (int i = 0; i < taskPolls.size(); i++) {
            assertEquals(first + i * 500_000_000L, taskPolls.get(i), "poll " + (i + 1));
        }
        assertEquals(1, fake.calls("SandboxTerminate").size(), "the unscheduled sandbox is terminated");
        assertTrue(fake.calls("TaskGetCommandRouterAccess").isEmpty());
    }

    @Test
    void aV1SandboxThatEndsBeforeItIsScheduledFailsAtTheFirstPollWithoutWaiting() {
        v1Runner(Duration.ofSeconds(60));
        fake.taskIdAnswer = n -> {
            taskPolls.add(now.get() - START);
            return ModalApi.SandboxGetTaskIdResponse.newBuilder().setTaskResult(ModalApi.GenericResult.newBuilder()
                    .setStatus(ModalApi.GenericResult.GenericStatus.GENERIC_STATUS_FAILURE).setException("no capacity"));
        };
        SandboxException e = assertThrows(SandboxException.class, () -> runner.run(RunRequest.python("print(1)")));
        assertTrue(String.valueOf(e.getMessage()).contains("ended before it was scheduled: GENERIC_STATUS_FAILURE no capacity"),
                e.getMessage());
        assertEquals(1, taskPolls.size(), "polls: " + shown());
        assertTrue(sleeps.stream().noneMatch(d -> d.equals(Duration.ofMillis(500))), "no poll delay: " + sleeps);
    }

    @Test
    void anImageThatNeverFinishesBuildingFailsAtTheBuildTimeoutOnTheBackoffClock() {
        runner.close();
        runner = builder().imageBuildTimeout(Duration.ofMinutes(5)).maxCreateAttempts(1).build();
        List<Long> joins = new CopyOnWriteArrayList<>();
        fake.imageJoinAnswer = n -> {
            joins.add(now.get() - START);
            now.addAndGet(Duration.ofSeconds(60).toNanos()); // the server held the stream and the build goes on
            ModalApi.ImageJoinStreamingResponse.Builder b = ModalApi.ImageJoinStreamingResponse.newBuilder().setEntryId(n + "-0");
            // a wait measured on another clock would go on: end it after 10 joins so the test fails instead of hanging
            return n < 10 ? b : b.setResult(ModalApi.GenericResult.newBuilder()
                    .setStatus(ModalApi.GenericResult.GenericStatus.GENERIC_STATUS_SUCCESS));
        };
        SandboxException e = assertThrows(SandboxException.class, () -> runner.run(RunRequest.python("print(1)")));
        assertTrue(String.valueOf(e.getMessage()).contains("did not finish building within PT5M"), e.getMessage());
        assertTrue(e.isRetriable());
        long first = joins.get(0);
        assertEquals(List.of(first, first + 60_000_000_000L, first + 120_000_000_000L, first + 180_000_000_000L,
                first + 240_000_000_000L), joins, "a join per minute until 5 min have passed, none after");
        List<String> resumedFrom = fake.calls("ImageJoinStreaming").stream()
                .map(c -> ((ModalApi.ImageJoinStreamingRequest) c.request).getLastEntryId()).toList();
        assertEquals(List.of("", "1-0", "2-0", "3-0", "4-0"), resumedFrom);
        assertTrue(fake.calls("SandboxCreateV2").isEmpty(), "no sandbox without its image");
    }
}
