package dev.sandbox4j.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.policy.Language;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The one language table every runner that starts interpreters itself uses (issue 32). */
class CodeCommandTest {
    @Test
    void eachLanguageHasItsInterpreterFlagAndExtension() {
        assertEquals(List.of("python3", "-c", "print(1)"), CodeCommand.of(Language.PYTHON).inline("print(1)"));
        assertEquals(List.of("node", "-e", "1"), CodeCommand.of(Language.JAVASCRIPT).inline("1"));
        assertEquals(List.of("bash", "-c", "echo"), CodeCommand.of(Language.BASH).inline("echo"));
        assertEquals(List.of("python3", "/t/c.py"), CodeCommand.of(Language.PYTHON).file("/t/c.py"));
        assertEquals(".py", CodeCommand.of(Language.PYTHON).extension());
        assertEquals(".js", CodeCommand.of(Language.JAVASCRIPT).extension());
        assertEquals(".sh", CodeCommand.of(Language.BASH).extension());
        assertEquals(List.of("node"), CodeCommand.of(Language.JAVASCRIPT).program());
    }

    @Test
    void unbufferedPythonRunsWithDashUAndTheOthersAreUnchanged() {
        assertEquals(List.of("python3", "-u"), CodeCommand.unbuffered(Language.PYTHON).program());
        assertEquals(List.of("python3", "-u", "-c", "x"), CodeCommand.unbuffered(Language.PYTHON).inline("x"));
        assertEquals(List.of("python3", "-u", "/c.py"), CodeCommand.unbuffered(Language.PYTHON).file("/c.py"));
        assertEquals(List.of("node", "/c.js"), CodeCommand.unbuffered(Language.JAVASCRIPT).file("/c.js"));
        assertEquals(List.of("bash"), CodeCommand.unbuffered(Language.BASH).program());
    }

    @Test
    void inlineFitsCountTheWholeArgvAndRefuseNul() {
        CodeCommand py = CodeCommand.of(Language.PYTHON);
        String code = "x".repeat(100);
        long exact = 100 + "python3".length() + "-c".length() + 2;
        assertTrue(py.fitsInline(code, exact));
        assertFalse(py.fitsInline(code, exact - 1));
        assertFalse(CodeCommand.unbuffered(Language.PYTHON).fitsInline(code, exact), "the -u option counts too");
        assertFalse(py.fitsInline("a\0b", 1_000));
    }
}
