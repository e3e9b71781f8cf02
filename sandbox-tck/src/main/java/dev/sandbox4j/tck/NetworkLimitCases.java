package dev.sandbox4j.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.Limits;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Contract cases. A sandbox's network allowance ({@link Limits#networkMib()}, issue 31): the bytes it
 * moves are cut at the allowance and nothing passes after it. Part of {@link SandboxRunnerContract};
 * skipped by {@code Limit.NETWORK}, domain lists and the list canary.
 *
 * @since 0.1.0
 */
public interface NetworkLimitCases extends ContractContext {
    /**
     * Under {@link ListCanary#policy()} and a 1 MiB allowance, the code POSTs 4 KiB to the allowed name
     * (the control: it must arrive, so the zeros below can fail), then 3 MiB, then 4 KiB again, each with a
     * tag of its own. The 3 MiB upload must not succeed and at most the allowance may reach the canary from
     * it (a runner that counted nothing would carry all 3 MiB); the last upload, after the allowance is
     * spent, must not succeed and nothing of it may arrive.
     *
     * @throws Exception when the wait for the canary is interrupted
     */
    @Test
    default void aNetworkAllowanceCutsTheTrafficAtItsSizeAndNothingPassesAfterIt() throws Exception {
        requireLimit(Capabilities.Limit.NETWORK);
        requireLanguage(Language.PYTHON);
        ListCanary c = requireListCanary();
        String nonce = Long.toHexString(Double.doubleToLongBits(Math.random())).substring(0, 6);
        String base = "http://" + ListCanary.ALLOWED + ":" + c.port() + "/";
        String code = "import urllib.request, urllib.error\n"
                + "def post(tag, n):\n"
                + "    try:\n"
                + "        r = urllib.request.urlopen(urllib.request.Request('" + base + "' + tag, data=b'x' * n,"
                + " method='POST'), timeout=20)\n"
                + "        print(tag, 'STATUS', r.status)\n"
                + "    except urllib.error.HTTPError as e:\n"
                + "        print(tag, 'REFUSED', e.code)\n"
                + "    except Exception as e:\n"
                + "        print(tag, 'ERROR', type(e).__name__)\n"
                + "post('s-" + nonce + "', 4096)\n"
                + "post('l-" + nonce + "', 3 << 20)\n"
                + "post('t-" + nonce + "', 4096)\n";
        RunResult r = run(SandboxSpec.builder().egress(ListCanary.policy()).limits(Limits.builder().networkMib(1).build()).build(),
                Execution.builder(code).budget(Duration.ofSeconds(60)).build());
        assertExited(r, 0);
        String said = r.stdout() + r.stderr();
        CanaryListener canary = c.listener();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (canary.bytesContaining("/s-" + nonce) <= 4096 && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        assertTrue(canary.bytesContaining("/s-" + nonce) > 4096, "the first, small upload did not reach the canary, so the"
                + " limits below would prove nothing; the code said: " + said);
        assertTrue(r.stdout().contains("s-" + nonce + " STATUS 204"), "the small upload did not succeed: " + said);
        assertFalse(r.stdout().contains("l-" + nonce + " STATUS"), "3 MiB went through a 1 MiB allowance: " + said);
        long large = canary.bytesContaining("/l-" + nonce);
        assertTrue(large <= (1 << 20), "the canary received " + large + " bytes of the 3 MiB upload under a 1 MiB allowance");
        assertFalse(r.stdout().contains("t-" + nonce + " STATUS"), "an upload after the allowance was spent succeeded: " + said);
        assertEquals(0, canary.bytesContaining("/t-" + nonce), "an upload after the allowance was spent reached the canary");
    }
}
