package dev.sandbox4j.emulators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.tck.CanaryListener;
import dev.sandbox4j.tck.ListCanary;
import java.time.Duration;
import java.util.function.BiFunction;

/**
 * The list canary after a live update: a sandbox created under allow-all (its setup egress) is locked
 * down to {@link ListCanary#policy()} through the provider's live update (Vercel's session
 * network-policy, Daytona's network-settings), so the emulator switches a running local sandbox from
 * the host network to its egress proxy. The code then reaches {@link ListCanary#ALLOWED} (the control)
 * and not the canary's raw address, which the host network of the setup would have reached.
 */
public final class ListLockDown {
    private ListLockDown() {
    }

    /** Runs the check with {@code run} (the contract's {@code run(spec, execution)}). */
    public static void check(ListCanary c, BiFunction<SandboxSpec, Execution, RunResult> run) throws InterruptedException {
        String nonce = Long.toHexString(Double.doubleToLongBits(Math.random())).substring(0, 6);
        String allowed = "http://" + ListCanary.ALLOWED + ":" + c.port() + "/la-" + nonce;
        String raw = "http://" + c.address().getHostAddress() + ":" + c.port() + "/lr-" + nonce;
        String code = "import urllib.request, urllib.error\n"
                + "for tag, url in (('allowed', '" + allowed + "'), ('raw', '" + raw + "')):\n"
                + "    try:\n"
                + "        r = urllib.request.urlopen(urllib.request.Request(url, data=b'x' * 4096, method='POST'), timeout=20)\n"
                + "        print(tag, 'STATUS', r.status)\n"
                + "    except urllib.error.HTTPError as e:\n"
                + "        print(tag, 'REFUSED', e.code)\n"
                + "    except Exception as e:\n"
                + "        print(tag, 'ERROR', type(e).__name__, e)\n";
        SandboxSpec spec = SandboxSpec.builder().egress(ListCanary.policy()).setupEgress(EgressPolicy.allowAll())
                .setupCommand("true").setupBudget(Duration.ofSeconds(30)).build();
        RunResult r = run.apply(spec, Execution.builder(code).budget(Duration.ofSeconds(60)).build());
        String said = r.stdout() + r.stderr();
        assertEquals(RunStatus.EXITED, r.status(), said);
        CanaryListener canary = c.listener();
        long until = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        while (canary.bytesContaining("/la-" + nonce) <= 4096 && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        assertTrue(canary.bytesContaining("/la-" + nonce) > 4096, "the allowed name did not reach the canary after "
                + "the lock-down to the list, so the raw address's zero would prove nothing; the code said: " + said);
        assertTrue(r.stdout().contains("allowed STATUS 204"), said);
        assertEquals(0, canary.bytesContaining("/lr-" + nonce), "the raw address reached the canary after the lock-down "
                + "to " + ListCanary.policy() + " (the setup's host network was kept?); the code said: " + said);
        assertFalse(r.stdout().contains("raw STATUS"), said);
    }
}
