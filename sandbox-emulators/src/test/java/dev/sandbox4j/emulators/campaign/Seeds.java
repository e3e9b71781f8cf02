package dev.sandbox4j.emulators.campaign;

import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/**
 * The seeds of the fault campaigns (issue 29). By default each adapter has a fixed seed of its own, so
 * every CI run is the same test and a failure is one a second run shows again; {@code
 * -Dsandbox4j.campaign.seed=N} runs every adapter on {@code N} (a failure names the seed to give), and
 * {@code -Dsandbox4j.campaign.seed=random} draws one seed for the JVM, printed at the start and named in
 * every failure message.
 */
final class Seeds {
    static final String PROPERTY = "sandbox4j.campaign.seed";
    /** Seeds the campaign passed on when they were fixed; one per adapter, so CI covers six. */
    private static final Map<String, Long> FIXED = new TreeMap<>(Map.of(
            "e2b", 8970679464213320010L,
            "vercel", 9176041367542763681L,
            "daytona", 4242424242424242421L,
            "modal", 1357913579135791357L,
            "docker", 6067311092718274519L,
            "kubernetes", 2718281828459045235L,
            "local", 1618033988749894848L));
    private static final String GIVEN = System.getProperty(PROPERTY, "").trim();
    private static final long DRAWN = new Random().nextLong() & Long.MAX_VALUE;

    private Seeds() {
    }

    /** The seed of {@code adapter}'s campaign in this JVM. */
    static long of(String adapter) {
        if (GIVEN.isEmpty()) {
            Long fixed = FIXED.get(adapter);
            if (fixed == null) {
                throw new IllegalArgumentException("no fixed campaign seed for " + adapter + "; known: " + FIXED.keySet());
            }
            return fixed;
        }
        if (GIVEN.equals("random")) {
            return DRAWN;
        }
        try {
            return Long.parseLong(GIVEN);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("-D" + PROPERTY + " takes a number or 'random', not " + GIVEN, e);
        }
    }

    /** One line for the start of a campaign: which seeds run, and how they were chosen. */
    static String describe() {
        if (GIVEN.isEmpty()) {
            return "fixed seeds " + FIXED + " (-D" + PROPERTY + "=N replays N, =random draws one)";
        }
        return GIVEN.equals("random") ? "random seed " + DRAWN + " (drawn because -D" + PROPERTY + "=random)"
                : "seed " + GIVEN + " (from -D" + PROPERTY + ")";
    }

    /** The property to replay {@code adapter}'s campaign with, as a failure message gives it. */
    static String replay(String adapter) {
        return "-D" + PROPERTY + "=" + of(adapter);
    }
}
