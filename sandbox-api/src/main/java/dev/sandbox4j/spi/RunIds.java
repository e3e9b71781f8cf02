package dev.sandbox4j.spi;

import java.security.SecureRandom;

/**
 * Client-chosen run ids: 16 characters of [a-z0-9], valid in every provider's names and labels.
 *
 * @since 0.1.0
 */
public final class RunIds {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final char[] ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789".toCharArray();

    private RunIds() {
    }

    /** {@return a fresh run id: 16 characters of [a-z0-9] from a {@link SecureRandom}} */
    public static String next() {
        char[] c = new char[16];
        for (int i = 0; i < c.length; i++) {
            c[i] = ALPHABET[RANDOM.nextInt(ALPHABET.length)];
        }
        return new String(c);
    }
}
