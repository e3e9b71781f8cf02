package dev.sandbox4j.modal.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class ModalSettingsTest {
    @Test
    void theTomlSubsetOfAModalConfigFile() {
        Map<String, Map<String, String>> t = ModalSettings.parseToml(
                "[a]\nk = \"v # not a comment\"\nb = true # a comment\n[ \"c\" ]\nx='y'\n\n# end\n");
        assertEquals("v # not a comment", t.get("a").get("k"));
        assertEquals("true", t.get("a").get("b"));
        assertEquals("y", t.get("c").get("x"));
    }

    @Test
    void theJwtExpiryIsReadWithoutVerifyingAndDefaultsToTwentyMinutes() {
        String payload = java.util.Base64.getUrlEncoder().withoutPadding().encodeToString("{\"exp\":1795948495}".getBytes());
        assertEquals(1795948495000L, ModalRpc.expiryMillis("e30." + payload + ".sig", 0));
        assertEquals(1_200_000L, ModalRpc.expiryMillis("opaque-token", 0));
        assertTrue(ModalHandle.isV1Id("sb-MockSandbox00000000000"));
        assertTrue(!ModalHandle.isV1Id("sb-v2-mock-0001"));
    }
}
