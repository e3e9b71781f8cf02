package dev.sandbox4j.vercel.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.spi.Secret;
import dev.sandbox4j.http.HttpTransport;
import java.time.Instant;
import java.util.Base64;
import java.util.Objects;

/**
 * A token with the team and project it acts for. Either an access token with explicit team and project,
 * or a Vercel OIDC token (a JWT) whose claims {@code owner_id} and {@code project_id} name them.
 * The JWT is decoded without verifying its signature (Vercel verifies it); its content is never
 * logged or put in a message.
 */
public final class VercelCredentials {
    public static final String TOKEN = "VERCEL_TOKEN";
    public static final String TEAM_ID = "VERCEL_TEAM_ID";
    public static final String PROJECT_ID = "VERCEL_PROJECT_ID";
    public static final String OIDC_TOKEN = "VERCEL_OIDC_TOKEN";

    private final Secret token;
    private final String teamId;
    private final String projectId;

    private VercelCredentials(Secret token, String teamId, String projectId) {
        this.token = token;
        this.teamId = teamId;
        this.projectId = projectId;
    }

    /**
     * From an access token and explicit ids. If the token is itself a Vercel OIDC token, missing ids are
     * taken from its claims, and ids that contradict them are refused.
     *
     * @throws SandboxConfigurationException naming what is missing; never echoing the token
     */
    public static VercelCredentials of(String token, String teamId, String projectId) {
        if (blank(token)) {
            throw new SandboxConfigurationException("vercel: no token: set " + TOKEN + " (with " + TEAM_ID + " and "
                    + PROJECT_ID + ") or " + OIDC_TOKEN);
        }
        Claims claims = Claims.decode(token);
        if (claims != null) {
            claims.checkNotExpired(TOKEN);
            if (!blank(teamId) && !teamId.equals(claims.owner)) {
                throw new SandboxConfigurationException("vercel: " + TEAM_ID + " '" + teamId
                        + "' differs from the team in the OIDC token's owner_id claim ('" + claims.owner + "')");
            }
            if (!blank(projectId) && !projectId.equals(claims.project)) {
                throw new SandboxConfigurationException("vercel: " + PROJECT_ID + " '" + projectId
                        + "' differs from the project in the OIDC token's project_id claim ('" + claims.project + "')");
            }
            return new VercelCredentials(Secret.of(token), claims.owner, claims.project);
        }
        StringBuilder missing = new StringBuilder();
        if (blank(teamId)) {
            missing.append(TEAM_ID);
        }
        if (blank(projectId)) {
            missing.append(missing.length() == 0 ? "" : " and ").append(PROJECT_ID);
        }
        if (missing.length() > 0) {
            throw new SandboxConfigurationException("vercel: an access token needs the team and project it acts for: set "
                    + missing + " (or use a Vercel OIDC token in " + OIDC_TOKEN + ")");
        }
        return new VercelCredentials(Secret.of(token), teamId.trim(), projectId.trim());
    }

    /**
     * From a Vercel OIDC token alone.
     *
     * @throws SandboxConfigurationException if it is not one, lacks the claims, or has expired
     */
    public static VercelCredentials oidc(String jwt) {
        if (blank(jwt)) {
            throw new SandboxConfigurationException("vercel: " + OIDC_TOKEN + " is empty");
        }
        Claims claims = Claims.decode(jwt);
        if (claims == null) {
            throw new SandboxConfigurationException("vercel: " + OIDC_TOKEN
                    + " is not a Vercel OIDC token (a JWT with owner_id and project_id claims)");
        }
        claims.checkNotExpired(OIDC_TOKEN);
        return new VercelCredentials(Secret.of(jwt), claims.owner, claims.project);
    }

    public Secret token() {
        return token;
    }

    public String teamId() {
        return teamId;
    }

    public String projectId() {
        return projectId;
    }

    @Override
    public String toString() {
        return "VercelCredentials[team=" + teamId + ", project=" + projectId + ", token=***]";
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }

    /** The two claims that scope an OIDC token, and its expiry. */
    private static final class Claims {
        final String owner;
        final String project;
        final Long exp;

        private Claims(String owner, String project, Long exp) {
            this.owner = owner;
            this.project = project;
            this.exp = exp;
        }

        /** Null when {@code token} is not a JWT carrying both claims (then it is a plain access token). */
        static Claims decode(String token) {
            String[] parts = token.trim().split("\\.", -1);
            if (parts.length != 3) {
                return null;
            }
            try {
                JsonNode payload = HttpTransport.JSON.readTree(Base64.getUrlDecoder().decode(parts[1]));
                JsonNode owner = payload.path("owner_id");
                JsonNode project = payload.path("project_id");
                if (!owner.isTextual() || !project.isTextual() || owner.asText().isBlank() || project.asText().isBlank()) {
                    return null;
                }
                JsonNode exp = payload.path("exp");
                return new Claims(owner.asText(), project.asText(), exp.isNumber() ? exp.asLong() : null);
            } catch (java.io.IOException | IllegalArgumentException e) {
                return null; // not base64url JSON: an opaque token
            }
        }

        void checkNotExpired(String variable) {
            if (exp != null && Instant.ofEpochSecond(exp).isBefore(Instant.now())) {
                throw new SandboxConfigurationException("vercel: the OIDC token in " + variable + " expired at "
                        + Instant.ofEpochSecond(exp) + "; pull a fresh one (e.g. `vercel env pull`)");
            }
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof VercelCredentials c && c.token.equals(token) && c.teamId.equals(teamId)
                && c.projectId.equals(projectId);
    }

    @Override
    public int hashCode() {
        return Objects.hash(teamId, projectId);
    }
}
