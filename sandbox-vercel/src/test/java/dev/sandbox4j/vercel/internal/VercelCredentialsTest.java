package dev.sandbox4j.vercel.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.exception.SandboxConfigurationException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import org.junit.jupiter.api.Test;

public class VercelCredentialsTest {
    static final String ACCESS = "vcp_0123456789abcdefghijklmnopqrstuvwxyz0";

    /** An unsigned JWT such as `vercel env pull` writes (Vercel checks the signature, we never do). */
    static String jwt(String payloadJson) {
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        return b64.encodeToString("{\"alg\":\"RS256\",\"typ\":\"JWT\"}".getBytes(StandardCharsets.UTF_8)) + "."
                + b64.encodeToString(payloadJson.getBytes(StandardCharsets.UTF_8)) + ".c2lnbmF0dXJl";
    }

    public static String oidc(String owner, String project, long exp) {
        return jwt("{\"owner_id\":\"" + owner + "\",\"project_id\":\"" + project + "\",\"exp\":" + exp
                + ",\"sub\":\"owner:acme:project:p:environment:development\"}");
    }

    static long inAnHour() {
        return Instant.now().plusSeconds(3600).getEpochSecond();
    }

    @Test
    void accessTokenNeedsTeamAndProject() {
        VercelCredentials c = VercelCredentials.of(ACCESS, "team_FAKE123", "prj_FAKE456");
        assertEquals("team_FAKE123", c.teamId());
        assertEquals("prj_FAKE456", c.projectId());
        assertEquals(ACCESS, c.token().reveal());
        assertFalse(c.toString().contains(ACCESS));

        SandboxConfigurationException e = assertThrows(SandboxConfigurationException.class,
                () -> VercelCredentials.of(ACCESS, null, " "));
        assertTrue(e.getMessage().contains("VERCEL_TEAM_ID and VERCEL_PROJECT_ID"), e.getMessage());
        assertFalse(e.getMessage().contains(ACCESS));
        e = assertThrows(SandboxConfigurationException.class, () -> VercelCredentials.of(ACCESS, "team_x", null));
        assertTrue(e.getMessage().contains("set VERCEL_PROJECT_ID"), e.getMessage());
        e = assertThrows(SandboxConfigurationException.class, () -> VercelCredentials.of(null, "t", "p"));
        assertTrue(e.getMessage().contains("VERCEL_TOKEN") && e.getMessage().contains("VERCEL_OIDC_TOKEN"), e.getMessage());
    }

    @Test
    void oidcClaimsGiveTeamAndProject() {
        String token = oidc("team_FROM_OIDC", "prj_FROM_OIDC", inAnHour());
        VercelCredentials c = VercelCredentials.oidc(token);
        assertEquals("team_FROM_OIDC", c.teamId());
        assertEquals("prj_FROM_OIDC", c.projectId());
        assertEquals(token, c.token().reveal());
        assertFalse(c.toString().contains(token));
        // the same token in VERCEL_TOKEN: claims fill the ids, and contradicting ids are refused
        assertEquals("team_FROM_OIDC", VercelCredentials.of(token, null, null).teamId());
        SandboxConfigurationException e = assertThrows(SandboxConfigurationException.class,
                () -> VercelCredentials.of(token, "team_OTHER", null));
        assertTrue(e.getMessage().contains("owner_id"), e.getMessage());
        assertFalse(e.getMessage().contains(token));
    }

    @Test
    void badOrExpiredOidcTokensAreConfigurationErrors() {
        String expired = oidc("team_a", "prj_b", Instant.now().minusSeconds(60).getEpochSecond());
        SandboxConfigurationException e = assertThrows(SandboxConfigurationException.class,
                () -> VercelCredentials.oidc(expired));
        assertTrue(e.getMessage().contains("expired"), e.getMessage());
        assertFalse(e.getMessage().contains(expired));
        String noClaims = jwt("{\"sub\":\"x\"}");
        e = assertThrows(SandboxConfigurationException.class, () -> VercelCredentials.oidc(noClaims));
        assertTrue(e.getMessage().contains("owner_id and project_id"), e.getMessage());
        assertFalse(e.getMessage().contains(noClaims));
        assertThrows(SandboxConfigurationException.class, () -> VercelCredentials.oidc("a.%%%.c"));
        assertThrows(SandboxConfigurationException.class, () -> VercelCredentials.oidc(ACCESS));
    }
}
