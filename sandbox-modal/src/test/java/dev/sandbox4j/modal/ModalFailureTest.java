package dev.sandbox4j.modal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxAuthenticationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxInterruptedException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.modal.internal.proto.ModalApi;
import dev.sandbox4j.modal.internal.proto.ModalRouterApi;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import io.grpc.Metadata;
import io.grpc.Status;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Status mapping, retries and their limits, lost creates, throttling, the output cap, timeouts, interrupts. */
class ModalFailureTest extends ModalTestBase {

    static io.grpc.StatusRuntimeException throttled(float seconds) {
        Metadata trailers = new Metadata();
        ModalApi.RPCStatus details = ModalApi.RPCStatus.newBuilder().setCode(Status.Code.RESOURCE_EXHAUSTED.value())
                .addDetails(Any.pack(ModalApi.RPCRetryPolicy.newBuilder().setRetryAfterSecs(seconds).build())).build();
        trailers.put(Metadata.Key.of("grpc-status-details-bin", Metadata.BINARY_BYTE_MARSHALLER), details.toByteArray());
        return Status.RESOURCE_EXHAUSTED.withDescription("slow down").asRuntimeException(trailers);
    }

    private static boolean await(java.util.concurrent.CountDownLatch latch) {
        try {
            return latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    private RunResult run(String code) {
        return runner.run(RunRequest.python(code));
    }

    @Test
    void badCredentialsFailFastAsAuthenticationWithoutEchoingThem() {
        fake.fail("AuthTokenGet", Status.UNAUTHENTICATED.withDescription("invalid token " + TOKEN_ID + ":" + TOKEN_SECRET));
        SandboxException e = assertThrows(SandboxAuthenticationException.class, () -> run("print(1)"));
        assertFalse(e.isRetriable());
        assertFalse(e.getMessage().contains(TOKEN_SECRET), e.getMessage());
        assertFalse(e.getMessage().contains(TOKEN_ID), e.getMessage());
        assertEquals(1, fake.calls("AuthTokenGet").size());
        assertTrue(fake.sandboxes.isEmpty());
    }

    @Test
    void anExpiredAuthTokenIsFetchedAgainBeforeTheNextCall() {
        fake.authToken = FakeModal.jwt(-10, "expired");
        run("print(1)");
        int control = (int) fake.calls.stream().filter(c -> !c.method.startsWith("Task")).count();
        assertEquals(control, 2 * fake.calls("AuthTokenGet").size(), "one AuthTokenGet before each control-plane call");
        fake.calls.clear();
        fake.authToken = FakeModal.jwt(3600, "fresh");
        run("print(1)");
        run("print(1)");
        assertEquals(1, fake.calls("AuthTokenGet").size(), "a fresh token is cached");
    }

    @Test
    void anUnauthenticatedCallFetchesANewTokenAndIsSentOnceMore() {
        fake.fail("AppGetOrCreate", Status.UNAUTHENTICATED.withDescription("token expired"));
        assertEquals(3, run("print(1)").exitCode().getAsInt());
        assertEquals(2, fake.calls("AuthTokenGet").size());
        assertEquals(2, fake.calls("AppGetOrCreate").size());
    }

    @Test
    void throttlingIsWaitedOutWithTheSameIdempotencyKey() {
        fake.fail("AppGetOrCreate", throttled(1.5f));
        assertEquals(3, run("print(1)").exitCode().getAsInt());
        List<FakeModal.Call> apps = fake.calls("AppGetOrCreate");
        assertEquals(2, apps.size());
        assertEquals(apps.get(0).header("x-idempotency-key"), apps.get(1).header("x-idempotency-key"));
        assertEquals("1", apps.get(1).header("x-throttle-retry-attempt"));
        assertTrue(sleeps.contains(Duration.ofMillis(1500)), "slept as the server asked: " + sleeps);
    }

    @Test
    void throttlingLongerThanTheMaximumIsARateLimit() {
        runner.close();
        runner = builder().maxCreateAttempts(1).build();
        fake.fail("AppGetOrCreate", throttled(3600));
        SandboxException e = assertThrows(dev.sandbox4j.api.exception.SandboxRateLimitException.class, () -> run("print(1)"));
        assertEquals(Duration.ofHours(1), e.retryAfter().orElseThrow());
        assertTrue(e.isRetriable());
    }

    @Test
    void transientLookupFailuresAreRetriedWithTheSameKey() {
        fake.fail("ImageGetOrCreate", Status.UNAVAILABLE);
        fake.fail("ImageGetOrCreate", Status.INTERNAL);
        assertEquals(3, run("print(1)").exitCode().getAsInt());
        List<FakeModal.Call> images = fake.calls("ImageGetOrCreate");
        assertEquals(3, images.size());
        assertEquals(1, images.stream().map(c -> c.header("x-idempotency-key")).distinct().count());
        assertEquals(List.of("0", "1", "2"), images.stream().map(c -> c.header("x-retry-attempt")).toList());
    }

    @Test
    void aLostCreateIsNeverResentAndIsFoundByTagAndTerminated() {
        fake.loseCreateResponse = true;
        SandboxException e = assertThrows(SandboxException.class, () -> run("print(1)"));
        assertTrue(e.runId().isPresent());
        assertEquals(1, fake.calls("SandboxCreateV2").size(), "an ambiguous create is not sent again");
        runner.close(); // drains the lookup of the lost create
        List<FakeModal.Call> lists = fake.calls("SandboxListV2");
        assertFalse(lists.isEmpty());
        ModalApi.SandboxListRequest req = (ModalApi.SandboxListRequest) lists.get(0).request;
        assertEquals(FakeModal.APP_ID, req.getAppId());
        assertEquals(CreateRequest.RUN_ID_LABEL, req.getTags(0).getTagName());
        assertEquals(e.runId().get(), req.getTags(0).getTagValue());
        assertEquals(1, fake.calls("SandboxTerminateV2").size());
        assertEquals(0, fake.leaks());
    }

    @Test
    void aLostV1CreateIsFoundWithSandboxList() {
        runner.close();
        runner = builder().sandboxV2(false).build();
        fake.loseCreateResponse = true;
        assertThrows(SandboxException.class, () -> run("print(1)"));
        runner.close();
        assertEquals(1, fake.calls("SandboxCreate").size());
        assertFalse(fake.calls("SandboxList").isEmpty());
        assertEquals(1, fake.calls("SandboxTerminate").size());
    }

    @Test
    void aThrottledCreateIsRetriedBecauseTheServerRefusedIt() {
        fake.fail("SandboxCreateV2", throttled(0.2f));
        assertEquals(3, run("print(1)").exitCode().getAsInt());
        assertEquals(2, fake.calls("SandboxCreateV2").size());
        assertEquals(1, fake.sandboxes.size());
    }

    @Test
    void anAmbiguousExecStartIsNotResentAndMayHaveRun() {
        fake.fail("TaskExecStart", Status.UNAVAILABLE.withDescription("reset"));
        SandboxException e = assertThrows(SandboxException.class, () -> run("print(1)"));
        assertTrue(e.codeMayHaveRun());
        assertEquals(1, fake.calls("TaskExecStart").size());
        assertEquals(1, fake.calls("SandboxTerminateV2").size());
    }

    @Test
    void anExpiredRouterJwtIsRefreshedOnce() {
        fake.fail("TaskExecStart", Status.UNAUTHENTICATED);
        assertEquals(3, run("print(1)").exitCode().getAsInt());
        assertEquals(1, fake.calls("SandboxGetCommandRouterAccess").size());
        ModalApi.SandboxGetCommandRouterAccessRequest access =
                (ModalApi.SandboxGetCommandRouterAccessRequest) fake.calls("SandboxGetCommandRouterAccess").get(0).request;
        assertEquals(FakeModal.V2_SANDBOX, access.getSandboxId());
        assertEquals(2, fake.calls("TaskExecStart").size(), "refused, so sent again once");
    }

    @Test
    void theHardOutputCapStopsReadingAndKillsTheCommandByItsMarker() {
        fake.script.endlessStdout = true;
        fake.script.hang = true;
        long t0 = System.nanoTime();
        try (Sandbox sandbox = runner.open(SandboxSpec.defaults())) {
            RunResult r = sandbox.exec(Execution.builder("print('x' * 10**9)").budget(Duration.ofSeconds(60)).hardCapBytes(1 << 20).build());
            assertEquals(RunStatus.OUTPUT_LIMIT, r.status());
            assertEquals(1 << 20, r.stdoutBytes(), "bytes read stop at the hard cap");
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(30), "stopped well before the budget");
            assertTrue(await(fake.killArrived), "the kill goes out in the background");
            fake.script.endlessStdout = false;
            fake.script.hang = false;
            assertEquals(3, sandbox.exec(Execution.python("print(1)")).exitCode().getAsInt(), "the sandbox serves the next exec");
        }
        List<FakeModal.Call> starts = fake.calls("TaskExecStart");
        assertEquals(3, starts.size());
        ModalRouterApi.TaskExecStartRequest first = (ModalRouterApi.TaskExecStartRequest) starts.get(0).request;
        ModalRouterApi.TaskExecStartRequest kill = (ModalRouterApi.TaskExecStartRequest) starts.get(1).request;
        assertEquals("/bin/sh", kill.getCommandArgs(0));
        assertEquals(List.of("SANDBOX4J_EXEC_ID", first.getExecId()), kill.getCommandArgsList().subList(4, 6));
        assertTrue(kill.getEnvMap().isEmpty(), "the killer does not carry the marker it kills by");
    }

    @Test
    void aCommandPastItsBudgetTimesOutKeepsItsOutputAndIsKilled() {
        fake.script.hang = true;
        long t0 = System.nanoTime();
        try (Sandbox sandbox = runner.open(SandboxSpec.defaults())) {
            RunResult r = sandbox.exec(Execution.builder("while True: pass").budget(Duration.ofSeconds(1)).build());
            assertEquals(RunStatus.TIMED_OUT, r.status());
            assertEquals("hi\n", r.stdout(), "output printed before the deadline is kept");
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(30));
            assertTrue(await(fake.killArrived), "the command is killed by its marker");
        }
        assertEquals(2, fake.calls("TaskExecStart").size(), "the command, then its kill");
        ModalRouterApi.TaskExecStartRequest first = (ModalRouterApi.TaskExecStartRequest) fake.calls("TaskExecStart").get(0).request;
        assertEquals(1, first.getTimeoutSecs(), "Modal's own exec timeout is the budget");
    }

    @Test
    void aSignalIsKilledWith128PlusIt() {
        fake.script.code = null;
        fake.script.signal = 9;
        RunResult r = run("import os; os.kill(os.getpid(), 9)");
        assertEquals(RunStatus.KILLED, r.status());
        assertEquals(137, r.exitCode().getAsInt());
    }

    @Test
    void aDroppedStdoutStreamResumesFromItsOffset() {
        fake.script.stdout = List.of("hello\n".getBytes(StandardCharsets.UTF_8));
        fake.script.dropStdoutOnce = true;
        RunResult r = run("print('hello')");
        assertEquals("hello\n", r.stdout());
        List<ModalRouterApi.TaskExecStdioReadRequest> reads = fake.calls("TaskExecStdioRead").stream()
                .map(c -> (ModalRouterApi.TaskExecStdioReadRequest) c.request)
                .filter(q -> q.getFileDescriptor() == ModalRouterApi.TaskExecStdioFileDescriptor.TASK_EXEC_STDIO_FILE_DESCRIPTOR_STDOUT)
                .toList();
        assertEquals(2, reads.size());
        assertEquals(0, reads.get(0).getOffset());
        assertEquals(3, reads.get(1).getOffset());
    }

    @Test
    void anInterruptTearsTheSandboxDown() throws Exception {
        fake.script.hang = true;
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                run("while True: pass");
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        t.start();
        assertTrue(fake.waitArrived.await(30, TimeUnit.SECONDS));
        t.interrupt();
        t.join(TimeUnit.SECONDS.toMillis(30));
        assertFalse(t.isAlive());
        assertInstanceOf(SandboxInterruptedException.class, thrown.get());
        assertEquals(1, fake.calls("SandboxTerminateV2").size());
    }

    @Test
    void codeOverTheArgvLimitOrWithANulGoesByFileInBase64Chunks() {
        runner.close();
        runner = builder().argvLimitBytes(16).build();
        StringBuilder big = new StringBuilder("print('a fairly long line of code')\n");
        while (big.length() < 120 * 1024) {
            big.append("x = 'é ünïcode and $(quotes) `ticks` \\\\ \"'\n");
        }
        String code = big.toString();
        run(code);
        List<ModalRouterApi.TaskExecStartRequest> starts = fake.calls("TaskExecStart").stream()
                .map(c -> (ModalRouterApi.TaskExecStartRequest) c.request).toList();
        ModalRouterApi.TaskExecStartRequest exec = starts.get(starts.size() - 1);
        String path = exec.getCommandArgs(1);
        assertTrue(path.startsWith(".sandbox4j/code-") && path.endsWith(".py"), path);
        assertEquals(List.of("python3", path), exec.getCommandArgsList());
        assertEquals(code, new String(fake.files.get(path), StandardCharsets.UTF_8), "byte for byte");
        int chunks = (code.getBytes(StandardCharsets.UTF_8).length + 32 * 1024 - 1) / (32 * 1024);
        assertEquals(chunks + 1, starts.size(), "32 KiB chunks, then the command");
        for (ModalRouterApi.TaskExecStartRequest w : starts.subList(0, chunks)) {
            assertTrue(w.getCommandArgsList().stream().mapToInt(a -> a.getBytes(StandardCharsets.UTF_8).length).sum() <= 65_536);
            assertFalse(w.getCommandArgs(2).contains("fairly long"), "the code never enters the script text");
        }
        run("print(1)\0");
        assertEquals(chunks + 3, fake.calls("TaskExecStart").size());
    }

    @Test
    void inputFilesAreWrittenBeforeTheCode() {
        SandboxSpec spec = SandboxSpec.builder().file("data/in.txt", "hello").build();
        runner.run(RunRequest.of(spec, Execution.python("print(open('data/in.txt').read())")));
        assertEquals("hello", new String(fake.files.get("data/in.txt"), StandardCharsets.UTF_8));
    }

    @Test
    void whatModalCannotEnforceIsRefusedBeforeAnyCall() {
        for (EgressPolicy p : List.of(EgressPolicy.allowOnly("*.example.com"),
                EgressPolicy.builder(EgressPolicy.Default.ALLOW).denyCidr("203.0.113.0/24").build(),
                EgressPolicy.builder(EgressPolicy.Default.DENY).allowCidr("2001:db8::/32").build())) {
            assertThrows(UnsupportedPolicyException.class,
                    () -> runner.run(RunRequest.of(SandboxSpec.builder().egress(p).build(), Execution.python("print(1)"))), p.toString());
        }
        SandboxSpec setup = SandboxSpec.builder().egress(EgressPolicy.denyAll()).setupEgress(EgressPolicy.allowOnly("*.pypi.org"))
                .setupCommand("pip install requests").build();
        assertThrows(UnsupportedPolicyException.class, () -> runner.run(RunRequest.of(setup, Execution.python("print(1)"))));
        assertTrue(fake.calls.isEmpty(), "no call at all: " + fake.methods());
    }

    @Test
    void aScopedHeaderRuleIsRefusedBeforeAnyCall() {
        EgressPolicy scoped = EgressPolicy.builder().allowDomain("api.example.com")
                .headerRule(dev.sandbox4j.policy.HeaderRule.builder("api.example.com", "Authorization",
                        dev.sandbox4j.policy.SecretRef.of("key", () -> "sk-never-sent")).pathPrefix("/v1/").build())
                .build();
        UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class,
                () -> runner.run(RunRequest.of(SandboxSpec.builder().egress(scoped).build(), Execution.python("print(1)"))));
        assertTrue(e.violations().contains("header rule for 'api.example.com' scoped to paths under '/v1/' (modal cannot"
                + " enforce HEADER_RULE_SCOPES: the header would go on every request to the host)"), e.violations().toString());
        assertTrue(fake.calls.isEmpty(), "no call at all: " + fake.methods());
    }
}
