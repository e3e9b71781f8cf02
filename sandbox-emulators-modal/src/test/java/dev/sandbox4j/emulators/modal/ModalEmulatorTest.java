package dev.sandbox4j.emulators.modal;

import static dev.sandbox4j.emulators.modal.WireClient.definition;
import static dev.sandbox4j.emulators.modal.WireClient.fails;
import static dev.sandbox4j.emulators.modal.WireClient.readAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox4j.emulators.modal.internal.proto.ModalApi;
import dev.sandbox4j.emulators.modal.internal.proto.ModalApi.NetworkAccess.NetworkAccessType;
import dev.sandbox4j.emulators.modal.internal.proto.RouterApi;
import dev.sandbox4j.emulators.modal.internal.proto.TaskCommandRouterGrpc;
import dev.sandbox4j.tck.CanaryListener;
import com.google.protobuf.ByteString;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class ModalEmulatorTest {
    private static ModalEmulator emulator;
    private WireClient client;

    @BeforeAll
    static void start() throws Exception {
        emulator = ModalEmulator.builder().token("ak-test", "as-test").build();
    }

    @AfterAll
    static void stop() {
        emulator.close();
        assertEquals(0, emulator.ledger().live());
        assertEquals(0, emulator.openLocalSandboxes());
    }

    @AfterEach
    void noLeak() {
        emulator.faults().reset();
        if (client != null) {
            client.close();
        }
        // The leak count after every test: whatever a test created, it terminated.
        assertEquals(0, emulator.ledger().live(), emulator.ledger().toString());
        assertEquals(0, emulator.openLocalSandboxes());
    }

    private WireClient client() {
        client = new WireClient(emulator);
        return client;
    }

    private static RouterApi.TaskExecStartRequest.Builder exec(String task, String... argv) {
        return RouterApi.TaskExecStartRequest.newBuilder().setTaskId(task).setExecId(UUID.randomUUID().toString())
                .addAllCommandArgs(List.of(argv))
                .setStdoutConfig(RouterApi.TaskExecStdoutConfig.TASK_EXEC_STDOUT_CONFIG_PIPE)
                .setStderrConfig(RouterApi.TaskExecStderrConfig.TASK_EXEC_STDERR_CONFIG_PIPE);
    }

    private static RouterApi.TaskExecWaitResponse await(TaskCommandRouterGrpc.TaskCommandRouterBlockingStub r, String task, String exec) {
        return r.taskExecWait(RouterApi.TaskExecWaitRequest.newBuilder().setTaskId(task).setExecId(exec).build());
    }

    @Test
    void v1CreateExecReadWaitTerminate() {
        WireClient c = client();
        String[] ids = c.prepare();
        String sb = c.cp().sandboxCreate(ModalApi.SandboxCreateRequest.newBuilder().setAppId(ids[0])
                .setDefinition(definition(ids[1], NetworkAccessType.BLOCKED).setWorkdir("/tmp")).build()).getSandboxId();
        assertTrue(sb.matches("sb-[0-9A-Za-z]{22}"), sb);
        ModalApi.SandboxGetTaskIdRequest poll = ModalApi.SandboxGetTaskIdRequest.newBuilder().setSandboxId(sb).build();
        ModalApi.SandboxGetTaskIdResponse first = c.cp().sandboxGetTaskId(poll);
        assertFalse(first.hasTaskId() || first.hasTaskResult(), "the first poll: not scheduled yet");
        ModalApi.SandboxGetTaskIdResponse t = c.cp().sandboxGetTaskId(poll);
        assertTrue(t.hasTaskId());
        ModalApi.TaskGetCommandRouterAccessResponse access = c.cp().taskGetCommandRouterAccess(
                ModalApi.TaskGetCommandRouterAccessRequest.newBuilder().setTaskId(t.getTaskId()).build());
        assertTrue(access.getUrl().startsWith("https://127.0.0.1:"), access.getUrl());
        TaskCommandRouterGrpc.TaskCommandRouterBlockingStub r = c.router(access.getUrl(), access.getJwt());
        String code = "import os,sys\nprint('it''s $(no) `x` ✓', os.getcwd())\nprint('err', file=sys.stderr)\nsys.exit(3)";
        RouterApi.TaskExecStartRequest start = exec(t.getTaskId(), "python3", "-c", code).setTimeoutSecs(30).build();
        r.taskExecStart(start);
        r.taskExecStart(start); // the same exec id again: idempotent, one run
        assertEquals("its $(no) `x` ✓ /tmp\n", new String(readAll(r, t.getTaskId(), start.getExecId(), 0, 0), StandardCharsets.UTF_8));
        assertEquals("err\n", new String(readAll(r, t.getTaskId(), start.getExecId(), 1, 0), StandardCharsets.UTF_8));
        assertEquals("rr\n", new String(readAll(r, t.getTaskId(), start.getExecId(), 1, 1), StandardCharsets.UTF_8));
        assertEquals(3, await(r, t.getTaskId(), start.getExecId()).getCode());
        assertEquals(1, emulator.ledger().live());
        assertFalse(c.cp().sandboxTerminate(ModalApi.SandboxTerminateRequest.newBuilder().setSandboxId(sb).build()).hasExistingResult());
        ModalApi.SandboxWaitResponse w = c.cp().sandboxWait(ModalApi.SandboxWaitRequest.newBuilder().setSandboxId(sb).setTimeout(10).build());
        assertEquals(ModalApi.GenericResult.GenericStatus.GENERIC_STATUS_TERMINATED, w.getResult().getStatus());
        // after the end: task result, no router access
        assertTrue(c.cp().sandboxGetTaskId(ModalApi.SandboxGetTaskIdRequest.newBuilder().setSandboxId(sb).build()).hasTaskResult());
        assertEquals(Status.Code.FAILED_PRECONDITION, fails(() -> c.cp().taskGetCommandRouterAccess(
                ModalApi.TaskGetCommandRouterAccessRequest.newBuilder().setTaskId(t.getTaskId()).build())).getStatus().getCode());
    }

    @Test
    void v2ExecTimeoutDevnullMergedStderrAndEnv() throws Exception {
        WireClient c = client();
        String[] ids = c.prepare();
        ModalApi.SandboxCreateV2Response created = c.cp().sandboxCreateV2(ModalApi.SandboxCreateV2Request.newBuilder()
                .setAppId(ids[0]).setDefinition(definition(ids[1], NetworkAccessType.BLOCKED))
                .addSecretSources(ModalApi.SecretSource.newBuilder().setEnv(ModalApi.StringMap.newBuilder().putContents("SB_LEVEL", "s")))
                .build());
        assertFalse(created.getSandboxId().matches("sb-[0-9A-Za-z]{22}"), "a V2 id must not look like V1");
        String task = created.getTaskId();
        try {
        TaskCommandRouterGrpc.TaskCommandRouterBlockingStub r = c.router(created.getCommandRouterAccess().getUrl(),
                created.getCommandRouterAccess().getJwt());

        RouterApi.TaskExecStartRequest slow = exec(task, "bash", "-c", "echo started; sleep 30").setTimeoutSecs(1).build();
        r.taskExecStart(slow);
        RouterApi.TaskExecWaitResponse killed = await(r, task, slow.getExecId());
        assertEquals(9, killed.getSignal(), killed.toString()); // 128 + 9 = 137 for the SDK

        RouterApi.TaskExecStartRequest quiet = exec(task, "bash", "-c", "echo out; echo err >&2")
                .setStdoutConfig(RouterApi.TaskExecStdoutConfig.TASK_EXEC_STDOUT_CONFIG_DEVNULL).build();
        r.taskExecStart(quiet);
        assertEquals(0, await(r, task, quiet.getExecId()).getCode());
        assertEquals(0, readAll(r, task, quiet.getExecId(), 0, 0).length);
        assertEquals("err\n", new String(readAll(r, task, quiet.getExecId(), 1, 0), StandardCharsets.UTF_8));

        RouterApi.TaskExecStartRequest merged = exec(task, "bash", "-c", "echo \"$SB_LEVEL-$EXEC_LEVEL\"; echo e >&2")
                .setStderrConfig(RouterApi.TaskExecStderrConfig.TASK_EXEC_STDERR_CONFIG_STDOUT)
                .addSecretSources(ModalApi.SecretSource.newBuilder().setEnv(ModalApi.StringMap.newBuilder().putContents("EXEC_LEVEL", "x")))
                .build();
        r.taskExecStart(merged);
        assertEquals(0, await(r, task, merged.getExecId()).getCode());
        assertEquals("s-x\ne\n", new String(readAll(r, task, merged.getExecId(), 0, 0), StandardCharsets.UTF_8));

        JsonNode record = new ObjectMapper().readTree(emulator.recordJson());
        JsonNode mine = null;
        for (JsonNode s : record.get("sandboxes")) {
            if (s.get("id").asText().equals(created.getSandboxId())) {
                mine = s;
            }
        }
        assertNotNull(mine);
        assertEquals("V2", mine.get("version").asText());
        assertEquals(500, mine.get("milliCpu").asInt());
        assertEquals("BLOCKED", mine.get("networkAccess").get("type").asText());
        assertEquals(1, mine.get("execs").get(0).get("timeoutSecs").asInt());
        assertTrue(record.get("calls").get("modal.client.ModalClient/SandboxCreateV2").asInt() >= 1, "calls are counted");
        assertEquals(9, mine.get("execs").get(0).get("signal").asInt());
        assertEquals("[\"bash\",\"-c\",\"echo started; sleep 30\"]", mine.get("execs").get(0).get("argv").toString());
        assertEquals(0, mine.get("execs").get(1).get("stdoutConfig").asInt());
        assertEquals(2, mine.get("execs").get(2).get("stderrConfig").asInt());
        } finally {
            c.cp().sandboxTerminateV2(ModalApi.SandboxTerminateRequest.newBuilder().setSandboxId(created.getSandboxId()).build());
        }
    }

    @Test
    void checksTokensJwtsIdsAndLimits() {
        WireClient c = client();
        String[] ids = c.prepare();
        try (WireClient wrong = new WireClient(emulator, "ak-test", "as-wrong")) {
            assertEquals(Status.Code.UNAUTHENTICATED, fails(() -> wrong.cp().authTokenGet(
                    ModalApi.AuthTokenGetRequest.getDefaultInstance())).getStatus().getCode());
        }
        String token = c.authToken;
        c.authToken = null;
        assertEquals(Status.Code.UNAUTHENTICATED, fails(() -> c.cp().sandboxCreateV2(ModalApi.SandboxCreateV2Request.newBuilder()
                .setAppId(ids[0]).setDefinition(definition(ids[1], NetworkAccessType.BLOCKED)).build())).getStatus().getCode());
        c.authToken = token;
        assertEquals(Status.Code.NOT_FOUND, fails(() -> c.cp().sandboxTerminate(ModalApi.SandboxTerminateRequest.newBuilder()
                .setSandboxId("sb-0000000000000000000000").build())).getStatus().getCode());
        assertEquals(Status.Code.INVALID_ARGUMENT, fails(() -> c.cp().sandboxCreate(ModalApi.SandboxCreateRequest.newBuilder()
                .setAppId(ids[0]).setDefinition(definition(ids[1], NetworkAccessType.BLOCKED).setTimeoutSecs(86_401)).build()))
                .getStatus().getCode());
        assertEquals(Status.Code.INVALID_ARGUMENT, fails(() -> c.cp().sandboxCreate(ModalApi.SandboxCreateRequest.newBuilder()
                .setAppId(ids[0]).setDefinition(definition(ids[1], NetworkAccessType.ALLOWLIST, "not-a-cidr")).build()))
                .getStatus().getCode());
        assertEquals(0, emulator.ledger().live(), "a refused create leaves nothing");

        ModalApi.SandboxCreateV2Response a = c.cp().sandboxCreateV2(ModalApi.SandboxCreateV2Request.newBuilder()
                .setAppId(ids[0]).setDefinition(definition(ids[1], NetworkAccessType.BLOCKED)).build());
        ModalApi.SandboxCreateV2Response b = c.cp().sandboxCreateV2(ModalApi.SandboxCreateV2Request.newBuilder()
                .setAppId(ids[0]).setDefinition(definition(ids[1], NetworkAccessType.BLOCKED)).build());
        try {
            // V1 RPCs do not know V2 ids
            assertEquals(Status.Code.NOT_FOUND, fails(() -> c.cp().sandboxTerminate(ModalApi.SandboxTerminateRequest.newBuilder()
                    .setSandboxId(a.getSandboxId()).build())).getStatus().getCode());
            String url = a.getCommandRouterAccess().getUrl();
            assertEquals(Status.Code.UNAUTHENTICATED, fails(() -> c.router(url, "not.a.jwt").taskExecStart(
                    exec(a.getTaskId(), "true").build())).getStatus().getCode());
            String tampered = a.getCommandRouterAccess().getJwt() + "x";
            assertEquals(Status.Code.UNAUTHENTICATED, fails(() -> c.router(url, tampered).taskExecStart(
                    exec(a.getTaskId(), "true").build())).getStatus().getCode());
            // a JWT for sandbox b's task does not open sandbox a
            assertEquals(Status.Code.PERMISSION_DENIED, fails(() -> c.router(url, b.getCommandRouterAccess().getJwt())
                    .taskExecStart(exec(a.getTaskId(), "true").build())).getStatus().getCode());
            TaskCommandRouterGrpc.TaskCommandRouterBlockingStub r = c.router(url, a.getCommandRouterAccess().getJwt());
            assertEquals(Status.Code.NOT_FOUND, fails(() -> await(r, a.getTaskId(), "no-such-exec")).getStatus().getCode());
            assertEquals(Status.Code.NOT_FOUND, fails(() -> readAll(r, a.getTaskId(), "no-such-exec", 0, 0)).getStatus().getCode());
            assertEquals(Status.Code.INVALID_ARGUMENT, fails(() -> r.taskExecStart(exec(a.getTaskId(), "true").setTimeoutSecs(0).build()))
                    .getStatus().getCode());
        } finally {
            c.cp().sandboxTerminateV2(ModalApi.SandboxTerminateRequest.newBuilder().setSandboxId(a.getSandboxId()).build());
            c.cp().sandboxTerminateV2(ModalApi.SandboxTerminateRequest.newBuilder().setSandboxId(b.getSandboxId()).build());
        }
    }

    /** The egress canary can fail: only OPEN and an allowlist admitting the listener's address reach it. */
    @Test
    void networkAccessIsAppliedAndTheCanaryCanFail() throws Exception {
        WireClient c = client();
        String[] ids = c.prepare();
        try (CanaryListener canary = CanaryListener.start(InetAddress.getByName("127.0.0.1"))) {
            Object[][] cases = {
                {"blocked", NetworkAccessType.BLOCKED, new String[0], false},
                {"empty-allowlist", NetworkAccessType.ALLOWLIST, new String[0], false},
                {"other-cidr", NetworkAccessType.ALLOWLIST, new String[] {"10.0.0.0/8"}, false},
                {"loopback-cidr", NetworkAccessType.ALLOWLIST, new String[] {"127.0.0.1/32"}, true},
                {"open", NetworkAccessType.OPEN, new String[0], true},
            };
            for (Object[] k : cases) {
                String tag = (String) k[0];
                ModalApi.SandboxCreateV2Response sb = c.cp().sandboxCreateV2(ModalApi.SandboxCreateV2Request.newBuilder()
                        .setAppId(ids[0]).setDefinition(definition(ids[1], (NetworkAccessType) k[1], (String[]) k[2])).build());
                try {
                    TaskCommandRouterGrpc.TaskCommandRouterBlockingStub r = c.router(sb.getCommandRouterAccess().getUrl(),
                            sb.getCommandRouterAccess().getJwt());
                    String code = "import socket\ns=socket.create_connection(('127.0.0.1'," + canary.port() + "),timeout=3)\n"
                            + "s.sendall(b'" + tag + "\\nknock')\ns.close()";
                    RouterApi.TaskExecStartRequest e = exec(sb.getTaskId(), "python3", "-c", code).setTimeoutSecs(20).build();
                    r.taskExecStart(e);
                    int exit = await(r, sb.getTaskId(), e.getExecId()).getCode();
                    if ((Boolean) k[3]) {
                        assertEquals(0, exit, tag + ": " + new String(readAll(r, sb.getTaskId(), e.getExecId(), 1, 0), StandardCharsets.UTF_8));
                        assertTrue(canary.awaitBytes(tag, 10_000), tag + ": the canary received nothing");
                    } else {
                        assertTrue(exit != 0, tag + ": connected");
                        assertEquals(0, canary.bytes(tag), tag + ": bytes reached the canary");
                    }
                } finally {
                    c.cp().sandboxTerminateV2(ModalApi.SandboxTerminateRequest.newBuilder().setSandboxId(sb.getSandboxId()).build());
                }
            }
        }
    }

    /**
     * TaskSetNetworkAccess switches the local sandbox's egress for the next commands: open, then an
     * empty allowlist (the canary is unreachable), then a loopback allowlist (reachable again). Types
     * other than ALLOWLIST and OPEN, bad CIDRs, another task and a finished task are refused.
     */
    @Test
    void taskSetNetworkAccessSwitchesTheEgressOfTheNextCommands() throws Exception {
        WireClient c = client();
        String[] ids = c.prepare();
        try (CanaryListener canary = CanaryListener.start(InetAddress.getByName("127.0.0.1"))) {
            ModalApi.SandboxCreateV2Response sb = c.cp().sandboxCreateV2(ModalApi.SandboxCreateV2Request.newBuilder()
                    .setAppId(ids[0]).setDefinition(definition(ids[1], NetworkAccessType.OPEN)).build());
            String task = sb.getTaskId();
            TaskCommandRouterGrpc.TaskCommandRouterBlockingStub r = c.router(sb.getCommandRouterAccess().getUrl(),
                    sb.getCommandRouterAccess().getJwt());
            try {
                Object[][] steps = {
                    {"before", null, true},
                    {"locked", ModalApi.NetworkAccess.newBuilder().setNetworkAccessType(NetworkAccessType.ALLOWLIST).build(), false},
                    {"other-cidr", ModalApi.NetworkAccess.newBuilder().setNetworkAccessType(NetworkAccessType.ALLOWLIST)
                            .addAllowedCidrs("10.0.0.0/8").addAllowedDomains("pypi.org").build(), false},
                    {"loopback", ModalApi.NetworkAccess.newBuilder().setNetworkAccessType(NetworkAccessType.ALLOWLIST)
                            .addAllowedCidrs("127.0.0.0/8").build(), true},
                };
                for (Object[] k : steps) {
                    String tag = (String) k[0];
                    if (k[1] != null) {
                        r.taskSetNetworkAccess(RouterApi.TaskSetNetworkAccessRequest.newBuilder().setTaskId(task)
                                .setNetworkAccess((ModalApi.NetworkAccess) k[1]).build());
                    }
                    String code = "import socket\ns=socket.create_connection(('127.0.0.1'," + canary.port() + "),timeout=3)\n"
                            + "s.sendall(b'" + tag + "\\nknock')\ns.close()";
                    RouterApi.TaskExecStartRequest e = exec(task, "python3", "-c", code).setTimeoutSecs(20).build();
                    r.taskExecStart(e);
                    int exit = await(r, task, e.getExecId()).getCode();
                    if ((Boolean) k[2]) {
                        assertEquals(0, exit, tag + ": " + new String(readAll(r, task, e.getExecId(), 1, 0), StandardCharsets.UTF_8));
                        assertTrue(canary.awaitBytes(tag, 10_000), tag + ": the canary received nothing");
                    } else {
                        assertTrue(exit != 0, tag + ": connected");
                        assertEquals(0, canary.bytes(tag), tag + ": bytes reached the canary");
                    }
                }
                for (ModalApi.NetworkAccess bad : List.of(
                        ModalApi.NetworkAccess.newBuilder().setNetworkAccessType(NetworkAccessType.BLOCKED).build(),
                        ModalApi.NetworkAccess.getDefaultInstance(),
                        ModalApi.NetworkAccess.newBuilder().setNetworkAccessType(NetworkAccessType.ALLOWLIST).addAllowedCidrs("nope").build(),
                        ModalApi.NetworkAccess.newBuilder().setNetworkAccessType(NetworkAccessType.OPEN).addAllowedCidrs("10.0.0.0/8").build())) {
                    assertEquals(Status.Code.INVALID_ARGUMENT, fails(() -> r.taskSetNetworkAccess(RouterApi.TaskSetNetworkAccessRequest
                            .newBuilder().setTaskId(task).setNetworkAccess(bad).build())).getStatus().getCode(), bad.toString());
                }
                assertEquals(Status.Code.INVALID_ARGUMENT, fails(() -> r.taskSetNetworkAccess(RouterApi.TaskSetNetworkAccessRequest
                        .newBuilder().setTaskId(task).build())).getStatus().getCode());
                assertEquals(Status.Code.PERMISSION_DENIED, fails(() -> r.taskSetNetworkAccess(RouterApi.TaskSetNetworkAccessRequest
                        .newBuilder().setTaskId("ta-other").setNetworkAccess(ModalApi.NetworkAccess.newBuilder()
                                .setNetworkAccessType(NetworkAccessType.ALLOWLIST)).build())).getStatus().getCode());
            } finally {
                c.cp().sandboxTerminateV2(ModalApi.SandboxTerminateRequest.newBuilder().setSandboxId(sb.getSandboxId()).build());
            }
            assertEquals(Status.Code.FAILED_PRECONDITION, fails(() -> r.taskSetNetworkAccess(RouterApi.TaskSetNetworkAccessRequest
                    .newBuilder().setTaskId(task).setNetworkAccess(ModalApi.NetworkAccess.newBuilder()
                            .setNetworkAccessType(NetworkAccessType.ALLOWLIST)).build())).getStatus().getCode());
        }
    }

    @Test
    void faultUnavailableAndResourceExhaustedOnCreateCreateNothing() {
        WireClient c = client();
        String[] ids = c.prepare();
        ModalApi.SandboxCreateRequest req = ModalApi.SandboxCreateRequest.newBuilder().setAppId(ids[0])
                .setDefinition(definition(ids[1], NetworkAccessType.BLOCKED)).build();
        emulator.faults().failCreate(503, 1);
        assertEquals(Status.Code.UNAVAILABLE, fails(() -> c.cp().sandboxCreate(req)).getStatus().getCode());
        emulator.faults().failCreate(429, 1);
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, fails(() -> c.cp().sandboxCreate(req)).getStatus().getCode());
        assertEquals(0, emulator.ledger().live());
    }

    @Test
    void faultThrottleCarriesAnRpcRetryPolicy() throws Exception {
        WireClient c = client();
        String[] ids = c.prepare();
        emulator.faults().rateLimitCreate(1, 2);
        StatusRuntimeException e = fails(() -> c.cp().sandboxCreateV2(ModalApi.SandboxCreateV2Request.newBuilder()
                .setAppId(ids[0]).setDefinition(definition(ids[1], NetworkAccessType.BLOCKED)).build()));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
        byte[] details = e.getTrailers().get(Metadata.Key.of("grpc-status-details-bin", Metadata.BINARY_BYTE_MARSHALLER));
        ModalApi.RPCStatus status = ModalApi.RPCStatus.parseFrom(details);
        assertTrue(status.getDetails(0).getTypeUrl().endsWith("/modal.client.RPCRetryPolicy"));
        assertEquals(2.0f, ModalApi.RPCRetryPolicy.parseFrom(status.getDetails(0).getValue()).getRetryAfterSecs());
        assertEquals(0, emulator.ledger().live());
    }

    @Test
    void faultLostCreateIsFoundByTagAndTheSameKeyGetsTheSameSandbox() {
        WireClient c = client();
        String[] ids = c.prepare();
        String runId = UUID.randomUUID().toString();
        ModalApi.SandboxCreateRequest req = ModalApi.SandboxCreateRequest.newBuilder().setAppId(ids[0])
                .setDefinition(definition(ids[1], NetworkAccessType.BLOCKED))
                .addTags(ModalApi.SandboxTag.newBuilder().setTagName("sandbox4j-run-id").setTagValue(runId)).build();
        emulator.faults().loseCreateResponse(1);
        String key = UUID.randomUUID().toString();
        assertEquals(Status.Code.UNAVAILABLE, fails(() -> c.cp(key).sandboxCreate(req)).getStatus().getCode());
        assertEquals(1, emulator.ledger().live(), "the create took effect");
        ModalApi.SandboxListResponse found = c.cp().sandboxList(ModalApi.SandboxListRequest.newBuilder().setAppId(ids[0])
                .addTags(ModalApi.SandboxTag.newBuilder().setTagName("sandbox4j-run-id").setTagValue(runId)).build());
        assertEquals(1, found.getSandboxesCount());
        assertEquals(0, c.cp().sandboxList(ModalApi.SandboxListRequest.newBuilder().setAppId(ids[0])
                .addTags(ModalApi.SandboxTag.newBuilder().setTagName("sandbox4j-run-id").setTagValue("other")).build()).getSandboxesCount());
        // a retry with the same idempotency key answers with the sandbox that exists
        assertEquals(found.getSandboxes(0).getId(), c.cp(key).sandboxCreate(req).getSandboxId());
        assertEquals(1, emulator.ledger().created() - emulator.ledger().destroyed());
        c.cp().sandboxTerminate(ModalApi.SandboxTerminateRequest.newBuilder().setSandboxId(found.getSandboxes(0).getId()).build());
    }

    @Test
    void faultDroppedStreamResumesFromTheOffset() {
        WireClient c = client();
        String[] ids = c.prepare();
        ModalApi.SandboxCreateV2Response sb = c.cp().sandboxCreateV2(ModalApi.SandboxCreateV2Request.newBuilder()
                .setAppId(ids[0]).setDefinition(definition(ids[1], NetworkAccessType.BLOCKED)).build());
        try {
            TaskCommandRouterGrpc.TaskCommandRouterBlockingStub r = c.router(sb.getCommandRouterAccess().getUrl(),
                    sb.getCommandRouterAccess().getJwt());
            RouterApi.TaskExecStartRequest e = exec(sb.getTaskId(), "bash", "-c", "seq 1 2000").build();
            r.taskExecStart(e);
            assertEquals(0, await(r, sb.getTaskId(), e.getExecId()).getCode());
            emulator.faults().dropStream(1);
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            StatusRuntimeException dropped = null;
            try {
                r.taskExecStdioRead(RouterApi.TaskExecStdioReadRequest.newBuilder().setTaskId(sb.getTaskId())
                        .setExecId(e.getExecId()).build()).forEachRemaining(x -> got.writeBytes(x.getData().toByteArray()));
            } catch (StatusRuntimeException x) {
                dropped = x;
            }
            assertNotNull(dropped, "the stream was not dropped");
            assertEquals(Status.Code.UNAVAILABLE, dropped.getStatus().getCode());
            assertTrue(got.size() > 0, "nothing before the drop");
            got.writeBytes(readAll(r, sb.getTaskId(), e.getExecId(), 0, got.size()));
            StringBuilder want = new StringBuilder();
            for (int i = 1; i <= 2000; i++) {
                want.append(i).append('\n');
            }
            assertEquals(want.toString(), got.toString(StandardCharsets.UTF_8));
        } finally {
            c.cp().sandboxTerminateV2(ModalApi.SandboxTerminateRequest.newBuilder().setSandboxId(sb.getSandboxId()).build());
        }
    }

    @Test
    void faultTerminateFailsTwiceThenSucceeds() {
        WireClient c = client();
        String[] ids = c.prepare();
        String sb = c.cp().sandboxCreate(ModalApi.SandboxCreateRequest.newBuilder().setAppId(ids[0])
                .setDefinition(definition(ids[1], NetworkAccessType.BLOCKED)).build()).getSandboxId();
        emulator.faults().failTeardown(503, 2);
        ModalApi.SandboxTerminateRequest t = ModalApi.SandboxTerminateRequest.newBuilder().setSandboxId(sb).build();
        assertEquals(Status.Code.UNAVAILABLE, fails(() -> c.cp().sandboxTerminate(t)).getStatus().getCode());
        assertEquals(Status.Code.UNAVAILABLE, fails(() -> c.cp().sandboxTerminate(t)).getStatus().getCode());
        assertEquals(1, emulator.ledger().live(), "a failed terminate leaves the sandbox alive");
        c.cp().sandboxTerminate(t);
        // terminate is idempotent: a second one reports the result it already had
        assertTrue(c.cp().sandboxTerminate(t).hasExistingResult());
    }

    @Test
    void timeoutSecsEndsTheSandboxWithTimeout() {
        WireClient c = client();
        String[] ids = c.prepare();
        String sb = c.cp().sandboxCreate(ModalApi.SandboxCreateRequest.newBuilder().setAppId(ids[0])
                .setDefinition(definition(ids[1], NetworkAccessType.BLOCKED).setTimeoutSecs(1)).build()).getSandboxId();
        ModalApi.SandboxWaitResponse w;
        do {
            w = c.cp().sandboxWait(ModalApi.SandboxWaitRequest.newBuilder().setSandboxId(sb).setTimeout(10).build());
        } while (!w.hasResult());
        assertEquals(ModalApi.GenericResult.GenericStatus.GENERIC_STATUS_TIMEOUT, w.getResult().getStatus());
        assertEquals(0, emulator.ledger().live(), "the expiry tore it down");
        // finished sandboxes are listed only on request
        assertEquals(0, c.cp().sandboxList(ModalApi.SandboxListRequest.newBuilder().setAppId(ids[0]).build()).getSandboxesCount());
        assertTrue(c.cp().sandboxList(ModalApi.SandboxListRequest.newBuilder().setAppId(ids[0]).setIncludeFinished(true).build())
                .getSandboxesList().stream().anyMatch(i -> i.getId().equals(sb)));
    }

    @Test
    void anEmulatorThatCannotBindItsPortLeavesNothingRunning() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int routerPort;
            try (java.net.ServerSocket free = new java.net.ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                routerPort = free.getLocalPort();
            }
            long timersBefore = timerThreads(Long.MAX_VALUE);
            org.junit.jupiter.api.Assertions.assertThrows(java.io.IOException.class,
                    () -> ModalEmulator.builder().port(taken.getLocalPort()).routerPort(routerPort).build());
            assertEquals(timersBefore, timerThreads(timersBefore), "the failed emulator's timer thread is still running");
            // the router started before the control plane failed: its port is free again
            try (java.net.ServerSocket again = new java.net.ServerSocket(routerPort, 1, InetAddress.getLoopbackAddress())) {
                assertEquals(routerPort, again.getLocalPort());
            }
        }
    }

    /** Live "modal-emulator-timers" threads, once their count is back at {@code expected} or after 5 s. */
    private static long timerThreads(long expected) throws InterruptedException {
        long until = System.nanoTime() + 5_000_000_000L;
        while (true) {
            long n = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.isAlive() && t.getName().equals("modal-emulator-timers")).count();
            if (n <= expected || System.nanoTime() > until) {
                return n;
            }
            Thread.sleep(20); // a shut-down executor's thread ends right after; bounded
        }
    }

    @Test
    void sandboxListPagesByCreatedAtAndV1ListOmitsV2() {
        WireClient c = client();
        String[] ids = c.prepare();
        String tag = UUID.randomUUID().toString();
        List<String> made = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                made.add(c.cp().sandboxCreate(ModalApi.SandboxCreateRequest.newBuilder().setAppId(ids[0])
                        .setDefinition(definition(ids[1], NetworkAccessType.BLOCKED))
                        .addTags(ModalApi.SandboxTag.newBuilder().setTagName("t").setTagValue(tag)).build()).getSandboxId());
            }
            made.add(c.cp().sandboxCreateV2(ModalApi.SandboxCreateV2Request.newBuilder().setAppId(ids[0])
                    .setDefinition(definition(ids[1], NetworkAccessType.BLOCKED))
                    .addTags(ModalApi.SandboxTag.newBuilder().setTagName("t").setTagValue(tag)).build()).getSandboxId());
            ModalApi.SandboxListRequest.Builder q = ModalApi.SandboxListRequest.newBuilder().setAppId(ids[0])
                    .addTags(ModalApi.SandboxTag.newBuilder().setTagName("t").setTagValue(tag));
            List<String> v1 = new java.util.ArrayList<>();
            double before = 0;
            while (true) { // the SDK's paging loop: before_timestamp = the last created_at, until a page is empty
                ModalApi.SandboxListResponse page = c.cp().sandboxList(q.setBeforeTimestamp(before).build());
                if (page.getSandboxesCount() == 0) {
                    break;
                }
                page.getSandboxesList().forEach(i -> v1.add(i.getId()));
                before = page.getSandboxes(page.getSandboxesCount() - 1).getCreatedAt();
            }
            assertEquals(List.of(made.get(2), made.get(1), made.get(0)), v1, "newest first, V1 only");
            assertEquals(4, c.cp().sandboxListV2(q.setBeforeTimestamp(0).build()).getSandboxesCount(), "V2 lists both families");
        } finally {
            for (String id : made) {
                if (id.startsWith("sb-v2-")) {
                    c.cp().sandboxTerminateV2(ModalApi.SandboxTerminateRequest.newBuilder().setSandboxId(id).build());
                } else {
                    c.cp().sandboxTerminate(ModalApi.SandboxTerminateRequest.newBuilder().setSandboxId(id).build());
                }
            }
        }
    }

    @Test
    void mainSetsFaultKnobsAndRefusesUnknownOnes() {
        ModalEmulatorMain.setFaults(emulator, "failCreate=503:1&dropStream=2");
        assertEquals(503, emulator.faults().takeCreateFailure());
        assertTrue(emulator.faults().takeDroppedStream());
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> ModalEmulatorMain.setFaults(emulator, "noSuchFault=1"));
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> ModalEmulatorMain.setFaults(emulator, "failCreate=oops"));
    }

    @Test
    void faultHostileFramingIsAnEndlessLineBoundedByFlowControl() {
        WireClient c = client();
        String[] ids = c.prepare();
        ModalApi.SandboxCreateV2Response sb = c.cp().sandboxCreateV2(ModalApi.SandboxCreateV2Request.newBuilder()
                .setAppId(ids[0]).setDefinition(definition(ids[1], NetworkAccessType.BLOCKED)).build());
        try {
            TaskCommandRouterGrpc.TaskCommandRouterBlockingStub r = c.router(sb.getCommandRouterAccess().getUrl(),
                    sb.getCommandRouterAccess().getJwt());
            RouterApi.TaskExecStartRequest e = exec(sb.getTaskId(), "true").build();
            r.taskExecStart(e);
            emulator.faults().hostileFraming(true);
            io.grpc.Context.CancellableContext ctx = io.grpc.Context.current().withCancellation();
            long read = 0;
            try {
                java.util.Iterator<RouterApi.TaskExecStdioReadResponse> it = ctx.call(() -> r.taskExecStdioRead(
                        RouterApi.TaskExecStdioReadRequest.newBuilder().setTaskId(sb.getTaskId()).setExecId(e.getExecId()).build()));
                while (read < 32L << 20 && it.hasNext()) {
                    ByteString data = it.next().getData();
                    assertTrue(data.byteAt(0) == 'A' && data.toStringUtf8().indexOf('\n') < 0, "an endless line");
                    read += data.size();
                }
            } catch (Exception x) {
                throw new AssertionError(x);
            } finally {
                ctx.cancel(null);
            }
            assertTrue(read >= 32L << 20, "the stream ended after " + read + " bytes");
        } finally {
            emulator.faults().hostileFraming(false);
            c.cp().sandboxTerminateV2(ModalApi.SandboxTerminateRequest.newBuilder().setSandboxId(sb.getSandboxId()).build());
        }
    }

    @Test
    void mainPrintsWhatToExport() throws Exception {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        ModalEmulatorMain.print(emulator, "http://127.0.0.1:1", new PrintStream(buf, true, StandardCharsets.UTF_8));
        String[] lines = buf.toString(StandardCharsets.UTF_8).split("\n");
        assertEquals("export MODAL_SERVER_URL=" + emulator.serverUrl(), lines[0]);
        assertEquals("export MODAL_TOKEN_ID=ak-test", lines[1]);
        assertEquals("export MODAL_TOKEN_SECRET=as-test", lines[2]);
        // conformance/modal/run.sh takes the record URL as the token after "record at", up to a space
        assertTrue(lines[3].endsWith(" record at http://127.0.0.1:1/_emulator/record"), lines[3]);
    }
}
