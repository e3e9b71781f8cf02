package dev.sandbox4j.emulators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class EmulatorOptionsTest {

    @Test
    void takesTheSharedOptionsOutAndLeavesTheRestInOrder() {
        EmulatorOptions o = EmulatorOptions.parse(new String[] {"--port", "0", "--instant", "--create-delay-ms", "250", "--trace"});
        assertTrue(o.instant());
        assertEquals(Duration.ofMillis(250), o.createDelay());
        assertEquals(List.of("--port", "0", "--trace"), o.rest());
        Faults f = new Faults();
        o.applyTo(f);
        assertEquals(Duration.ofMillis(250), f.createDelay());
        assertTrue(o.describe().contains("instant"), o.describe());
    }

    @Test
    void nothingGivenIsNotInstantWithoutDelay() {
        EmulatorOptions o = EmulatorOptions.parse(new String[] {"8080"});
        assertFalse(o.instant());
        assertEquals(Duration.ZERO, o.createDelay());
        assertEquals(List.of("8080"), o.rest());
    }

    @Test
    void refusesAMissingOrBadDelay() {
        assertThrows(IllegalArgumentException.class, () -> EmulatorOptions.parse(new String[] {"--create-delay-ms"}));
        assertThrows(IllegalArgumentException.class, () -> EmulatorOptions.parse(new String[] {"--create-delay-ms", "x"}));
        assertThrows(IllegalArgumentException.class, () -> EmulatorOptions.parse(new String[] {"--create-delay-ms", "-1"}));
        assertThrows(IllegalArgumentException.class, () -> new Faults().createDelay(Duration.ofMillis(-1)));
    }
}
