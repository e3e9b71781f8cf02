package dev.sandbox4j.emulators.modal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.sandbox4j.emulators.modal.internal.Jwts;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class JwtsTest {
    /** A clock the test moves by hand. */
    static final class Hand extends Clock {
        Instant now = Instant.parse("2026-12-01T00:00:00Z");

        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    @Test
    void verifiesSignatureAudienceAndExpiry() {
        Hand clock = new Hand();
        Jwts jwts = new Jwts(clock);
        String token = jwts.mint("router", "ta-1", 60);
        assertEquals("ta-1", jwts.verify(token, "router"));
        assertNull(jwts.verify(token, "control"), "another audience");
        assertNull(new Jwts(clock).verify(token, "router"), "another emulator's key");
        String[] parts = token.split("\\.");
        String forged = parts[0] + "." + java.util.Base64.getUrlEncoder().withoutPadding()
                .encodeToString("{\"aud\":\"router\",\"sub\":\"ta-2\",\"exp\":9999999999}".getBytes()) + "." + parts[2];
        assertNull(jwts.verify(forged, "router"), "a changed payload");
        clock.now = clock.now.plus(Duration.ofSeconds(61));
        assertNull(jwts.verify(token, "router"), "expired");
        assertNull(jwts.verify("a.b", "router"));
        assertNull(jwts.verify(null, "router"));
    }
}
