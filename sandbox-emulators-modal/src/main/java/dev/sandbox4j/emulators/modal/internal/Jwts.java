package dev.sandbox4j.emulators.modal.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * HS256 JWTs signed with a key made at start: the control plane's {@code x-modal-auth-token} and the
 * command router's per-task bearer token. The SDKs read {@code exp} without verifying (modal.md 2), the
 * emulator verifies everything: signature, expiry, audience and, for the router, the task.
 */
public final class Jwts {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder B64D = Base64.getUrlDecoder();
    private static final String HEADER = B64.encodeToString("{\"alg\":\"HS256\",\"typ\":\"JWT\"}".getBytes(StandardCharsets.UTF_8));

    private final byte[] key = new byte[32];
    private final Clock clock;

    public Jwts(Clock clock) {
        new SecureRandom().nextBytes(key);
        this.clock = clock;
    }

    /** A token for {@code audience} ("control" or "router"), with {@code subject} (a task id for the router). */
    public String mint(String audience, String subject, long lifetimeSeconds) {
        ObjectNode claims = JSON.createObjectNode()
                .put("aud", audience)
                .put("sub", subject)
                .put("exp", clock.instant().getEpochSecond() + lifetimeSeconds);
        String body = B64.encodeToString(claims.toString().getBytes(StandardCharsets.UTF_8));
        return HEADER + "." + body + "." + B64.encodeToString(sign(HEADER + "." + body));
    }

    /** The subject of a valid, unexpired token for {@code audience}, or null for anything else. */
    public String verify(String token, String audience) {
        if (token == null) {
            return null;
        }
        String[] parts = token.split("\\.", -1);
        if (parts.length != 3 || !parts[0].equals(HEADER)) {
            return null;
        }
        byte[] given;
        JsonNode claims;
        try {
            given = B64D.decode(parts[2]);
            claims = JSON.readTree(B64D.decode(parts[1]));
        } catch (IllegalArgumentException | java.io.IOException e) {
            return null;
        }
        if (!MessageDigest.isEqual(given, sign(parts[0] + "." + parts[1]))) {
            return null;
        }
        if (!audience.equals(claims.path("aud").asText()) || claims.path("exp").asLong(0) <= clock.instant().getEpochSecond()) {
            return null;
        }
        return claims.path("sub").asText();
    }

    private byte[] sign(String input) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(input.getBytes(StandardCharsets.US_ASCII));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is missing", e);
        }
    }
}
