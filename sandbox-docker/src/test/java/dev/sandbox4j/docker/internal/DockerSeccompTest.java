package dev.sandbox4j.docker.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox4j.local.internal.SeccompFilter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Docker profile beside the local runner's table: every call the local filter denies is denied here
 * too (allowed by no rule), namespace flags are masked out of {@code clone} as there, and the socket
 * families are an allow list without vsock.
 */
class DockerSeccompTest {
    private static final JsonNode PROFILE = parse();

    /**
     * This class runs in the surefire execution {@code seccomp-beside-local}, the only one with sandbox-local on
     * its classpath (elsewhere auto() must not find the local runner); a {@code -Dtest} run also reaches it in
     * the default execution, which it leaves with that reason.
     */
    @BeforeAll
    static void besideLocal() {
        if (!Boolean.getBoolean("sandbox4j.seccompBesideLocal")) {
            Assumptions.abort("runs in the seccomp-beside-local surefire execution, where sandbox-local is on the classpath");
        }
    }

    private static JsonNode parse() {
        try {
            return DockerApi.MAPPER.readTree(DockerSeccomp.PROFILE);
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    /** Every rule that allows {@code call}, with or without conditions. */
    private static List<JsonNode> allowing(String call) {
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode rule : PROFILE.path("syscalls")) {
            boolean named = false;
            for (JsonNode n : rule.path("names")) {
                named |= n.asText().equals(call);
            }
            if (named && rule.path("action").asText().equals("SCMP_ACT_ALLOW")) {
                out.add(rule);
            }
        }
        return out;
    }

    @Test
    void everyCallTheLocalRunnerDeniesIsDeniedHere() {
        assertEquals("SCMP_ACT_ERRNO", PROFILE.path("defaultAction").asText(), "what no rule allows is refused");
        for (String call : SeccompFilter.DENIED) {
            assertEquals(List.of(), allowing(call), call + " is denied by the local runner and must be here too");
        }
    }

    @Test
    void cloneIsAllowedOnlyWithoutTheNamespaceFlagsTheLocalRunnerMasks() {
        assertEquals(SeccompFilter.CLONE_NAMESPACE_FLAGS & 0xffffffffL, DockerSeccomp.CLONE_NAMESPACE_FLAGS);
        List<JsonNode> clone = allowing("clone");
        assertEquals(1, clone.size(), clone.toString());
        JsonNode arg = clone.get(0).path("args").path(0);
        assertEquals("SCMP_CMP_MASKED_EQ", arg.path("op").asText());
        assertEquals(DockerSeccomp.CLONE_NAMESPACE_FLAGS, arg.path("value").asLong());
        assertEquals(0, arg.path("valueTwo").asLong());
        assertEquals(List.of(), allowing("clone3"), "clone3 fails (ENOSYS) so libraries fall back to clone");
    }

    @Test
    void socketIsAnAllowListOfFamiliesWithoutVsock() {
        List<Long> families = new ArrayList<>();
        for (JsonNode rule : allowing("socket")) {
            JsonNode arg = rule.path("args").path(0);
            assertEquals(0, arg.path("index").asInt());
            assertEquals("SCMP_CMP_EQ", arg.path("op").asText(), "each family is named, never a range or a negation");
            families.add(arg.path("value").asLong());
        }
        List<Long> local = SeccompFilter.ALLOWED_SOCKET_FAMILIES.values().stream().map(Integer::longValue).toList();
        assertEquals(local, families, "the families the local runner allows, and no other");
        for (Map.Entry<String, Integer> denied : SeccompFilter.EXAMPLE_DENIED_SOCKET_FAMILIES.entrySet()) {
            assertFalse(families.contains(denied.getValue().longValue()), denied.getKey());
        }
        for (String call : List.of("io_uring_setup", "io_uring_enter", "io_uring_register", "ptrace", "socketcall")) {
            assertEquals(List.of(), allowing(call), call);
        }
    }

    @Test
    void theProfileIsTheSameBytesEveryTime() {
        assertEquals(DockerSeccomp.PROFILE, DockerSeccomp.build().toString(), "attach compares the JSON as sent");
        assertTrue(DockerSeccomp.securityOpt().startsWith("seccomp={"));
    }
}
