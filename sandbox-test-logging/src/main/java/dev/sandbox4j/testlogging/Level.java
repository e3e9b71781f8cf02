package dev.sandbox4j.testlogging;

import java.util.Locale;

/** slf4j levels in order; {@code parse} accepts what a person types after {@code -Dsandbox4j.test.log=}. */
enum Level {
    TRACE, DEBUG, INFO, WARN, ERROR;

    static Level parse(String text) {
        try {
            return valueOf(text.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            return WARN;
        }
    }
}
