package dev.sandbox4j.modal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.modal.internal.proto.ModalApi;
import dev.sandbox4j.modal.internal.proto.ModalRouterApi;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import io.grpc.Status;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The lock-down after trusted setup (issue 30): the setup runs under the setup egress given at create,
 * then {@code TaskSetNetworkAccess} replaces it with the code's, then one exec kills what the setup
 * left, and only then the code runs; a failure of either step tears the sandbox down before any code.
 */
class ModalLockDownTest extends ModalTestBase {
    private static final SandboxSpec LOCK_DOWN = SandboxSpec.builder().egress(EgressPolicy.denyAll())
            .setupEgress(EgressPolicy.allowAll()).setupCommand("pip install requests").build();

    @BeforeEach
    void setupSucceeds() {
        fake.script.code = 0;
    }

    private RunResult run(SandboxSpec spec) {
        return runner.run(RunRequest.of(spec, Execution.python("print(1)")));
    }

    /** The methods after create, in order, kills and writes shown by what they are. */
    private List<String> routerSequence() {
        synchronized (fake.calls) {
            return fake.calls.stream().filter(c -> c.method.startsWith("Task") && !c.method.equals("TaskGetCommandRouterAccess"))
                    .map(c -> {
                        if (c.method.equals("TaskExecStart")) {
                            ModalRouterApi.TaskExecStartRequest r = (ModalRouterApi.TaskExecStartRequest) c.request;
                            boolean killMarked = r.getCommandArgsCount() == 5 && r.getCommandArgs(2).contains("/proc/");
                            return killMarked ? "TaskExecStart(kill marked)"
                                    : "TaskExecStart(" + (r.getEnvMap().containsKey("SANDBOX4J_EXEC_ID") ? "marked" : "unmarked") + ")";
                        }
                        return c.method;
                    }).toList();
        }
    }

    @Test
    void liveUpdateIsDeclared() {
        assertTrue(runner.capabilities().supports(Capabilities.Egress.LIVE_UPDATE));
    }

    @Test
    void theSetupRunsUnderTheSetupEgressThenTheLockDownThenTheKillThenTheCode() {
        RunResult r = run(LOCK_DOWN);
        assertTrue(r.succeeded(), r.toString());
        ModalApi.SandboxCreateV2Request create = (ModalApi.SandboxCreateV2Request) fake.calls("SandboxCreateV2").get(0).request;
        assertEquals(ModalApi.NetworkAccess.NetworkAccessType.OPEN, create.getDefinition().getNetworkAccess().getNetworkAccessType(),
                "created under the setup egress");
        List<String> seq = routerSequence();
        int setNet = seq.indexOf("TaskSetNetworkAccess");
        assertTrue(setNet > 0, seq.toString());
        assertEquals("TaskExecStart(marked)", seq.get(0), "the setup first: " + seq);
        assertEquals("TaskExecStart(kill marked)", seq.get(setNet + 1), "the kill right after the lock-down: " + seq);
        assertEquals("TaskExecWait", seq.get(setNet + 2), "the kill is waited for: " + seq);
        assertEquals("TaskExecStart(marked)", seq.get(setNet + 3), "then the code: " + seq);
        assertEquals(1, fake.calls("TaskSetNetworkAccess").size());
        // exactly what the SDKs send: task_id and an ALLOWLIST with both lists empty (deny-all)
        assertEquals(JSON.createObjectNode().put("task_id", FakeModal.TASK_V2)
                        .set("network_access", JSON.createObjectNode().put("network_access_type", "ALLOWLIST")),
                json(fake.calls("TaskSetNetworkAccess").get(0).request));
        assertTrue(fake.calls("TaskSetNetworkAccess").get(0).header("authorization").startsWith("Bearer "));
        // the setup's process was among those the kill found by its marker
        FakeModal.Exec setup = fake.execs.get(((ModalRouterApi.TaskExecStartRequest) fake.calls("TaskExecStart").get(0).request).getExecId());
        assertEquals(0, setup.killed.getCount(), "the setup exec's processes were killed");
    }

    @Test
    void rulesGoAsTheSameAllowlistAsAtCreate() {
        SandboxSpec spec = SandboxSpec.builder().egress(EgressPolicy.builder(EgressPolicy.Default.DENY)
                        .allowDomain("pypi.org").allowCidr("151.101.0.0/16").build())
                .setupEgress(EgressPolicy.allowAll()).setupCommand("true").build();
        run(spec);
        ModalRouterApi.TaskSetNetworkAccessRequest req =
                (ModalRouterApi.TaskSetNetworkAccessRequest) fake.calls("TaskSetNetworkAccess").get(0).request;
        assertEquals(ModalApi.NetworkAccess.NetworkAccessType.ALLOWLIST, req.getNetworkAccess().getNetworkAccessType());
        assertEquals(List.of("151.101.0.0/16"), req.getNetworkAccess().getAllowedCidrsList());
        assertEquals(List.of("pypi.org"), req.getNetworkAccess().getAllowedDomainsList());
    }

    @Test
    void aFailureThatMayHaveTakenEffectIsNotResentAndTheSandboxIsTornDownBeforeTheCode() {
        fake.fail("TaskSetNetworkAccess", Status.UNAVAILABLE.withDescription("connection reset"));
        SandboxException e = assertThrows(SandboxException.class, () -> run(LOCK_DOWN));
        assertTrue(e.getMessage().contains("TaskSetNetworkAccess"), e.getMessage());
        assertEquals(1, fake.calls("TaskSetNetworkAccess").size(), "never resent");
        assertEquals(1, fake.calls("TaskExecStart").size(), "the setup only: no kill, no code " + routerSequence());
        assertEquals(1, fake.calls("SandboxTerminateV2").size());
    }

    @Test
    void aDeadlineIsAFailureToo() {
        fake.fail("TaskSetNetworkAccess", Status.DEADLINE_EXCEEDED);
        assertThrows(SandboxException.class, () -> run(LOCK_DOWN));
        assertEquals(1, fake.calls("TaskSetNetworkAccess").size(), "never resent");
        assertEquals(1, fake.calls("TaskExecStart").size(), "no code " + routerSequence());
        assertEquals(1, fake.calls("SandboxTerminateV2").size());
    }

    @Test
    void aRefusalIsAnUnsupportedPolicyAndTearsDown() {
        fake.fail("TaskSetNetworkAccess", Status.INVALID_ARGUMENT.withDescription("only ALLOWLIST is supported"));
        UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class, () -> run(LOCK_DOWN));
        assertTrue(e.getMessage().contains("only ALLOWLIST is supported"), e.getMessage());
        assertEquals(1, fake.calls("TaskExecStart").size(), "no code " + routerSequence());
        assertEquals(1, fake.calls("SandboxTerminateV2").size());
    }

    @Test
    void anExpiredRouterJwtIsRefreshedAndTheRefusedCallSentOnceMore() {
        fake.fail("TaskSetNetworkAccess", Status.UNAUTHENTICATED.withDescription("jwt expired"));
        assertTrue(run(LOCK_DOWN).succeeded());
        assertEquals(2, fake.calls("TaskSetNetworkAccess").size());
        assertEquals(1, fake.calls("SandboxGetCommandRouterAccess").size());
    }

    @Test
    void aKillThatCannotClearTheSetupsProcessesTearsDownBeforeTheCode() {
        fake.killMarkedCode = 1;
        SandboxException e = assertThrows(SandboxException.class, () -> run(LOCK_DOWN));
        assertTrue(e.getMessage().contains("killing the setup's processes"), e.getMessage());
        assertEquals(List.of("TaskExecStart(marked)", "TaskExecWait", "TaskSetNetworkAccess", "TaskExecStart(kill marked)", "TaskExecWait"),
                routerSequence().stream().filter(m -> !m.equals("TaskExecStdioRead")).toList());
        assertEquals(1, fake.calls("SandboxTerminateV2").size());
    }

    @Test
    void noLockDownMeansNoCall() {
        run(SandboxSpec.builder().egress(EgressPolicy.denyAll()).setupCommand("true").build());
        assertTrue(fake.calls("TaskSetNetworkAccess").isEmpty());
        assertFalse(routerSequence().contains("TaskExecStart(kill marked)"));
    }
}
