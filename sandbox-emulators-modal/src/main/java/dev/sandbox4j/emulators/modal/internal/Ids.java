package dev.sandbox4j.emulators.modal.internal;

import java.security.SecureRandom;

/**
 * Object ids in Modal's shapes. The SDKs tell the V1 from the V2 sandbox family by the id alone
 * ({@code sb-} then exactly 22 base62 characters is V1, modal.md 3.11), so V2 ids carry an extra
 * {@code v2-} segment.
 */
public final class Ids {
    private static final String BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    private static final SecureRandom RANDOM = new SecureRandom();

    private Ids() {
    }

    /** {@code prefix-} and 22 base62 characters, e.g. {@code sb-…}, {@code ta-…}, {@code ap-…}. */
    public static String make(String prefix) {
        StringBuilder sb = new StringBuilder(prefix).append('-');
        for (int i = 0; i < 22; i++) {
            sb.append(BASE62.charAt(RANDOM.nextInt(BASE62.length())));
        }
        return sb.toString();
    }

    public static String v1Sandbox() {
        return make("sb");
    }

    public static String v2Sandbox() {
        return make("sb-v2");
    }

    /** The SDK's own test (getSandboxVersion): {@code sb-} plus exactly 22 base62 characters. */
    public static boolean isV1Sandbox(String id) {
        String[] parts = id.split("-", -1);
        if (parts.length != 2 || !parts[0].equals("sb") || parts[1].length() != 22) {
            return false;
        }
        for (char c : parts[1].toCharArray()) {
            if (BASE62.indexOf(c) < 0) {
                return false;
            }
        }
        return true;
    }
}
