package dev.sandbox4j.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class SandboxPathsTest {
    @Test
    void normalisesAndRefusesEscapes() {
        assertEquals("a/b.txt", SandboxPaths.normalize("./a//b.txt/"));
        assertEquals("", SandboxPaths.normalize("."));
        for (String bad : new String[] {"/etc/passwd", "../x", "a/../../x", "a/..", "a\\b", "a\0b", "a\nb"}) {
            assertThrows(IllegalArgumentException.class, () -> SandboxPaths.normalize(bad), bad);
        }
        assertThrows(IllegalArgumentException.class, () -> SandboxPaths.normalize("x".repeat(SandboxPaths.MAX_PATH_LENGTH + 1)));
    }

    @Test
    void globsMatchWithinAndAcrossParts() {
        Pattern p = SandboxPaths.glob("out/*.png");
        assertTrue(p.matcher("out/chart.png").matches());
        assertFalse(p.matcher("out/sub/chart.png").matches());
        assertFalse(p.matcher("outXchart.png").matches());
        Pattern any = SandboxPaths.glob("**/*.csv");
        assertTrue(any.matcher("a.csv").matches());
        assertTrue(any.matcher("x/y/a.csv").matches());
        assertFalse(any.matcher("x/y/a.csv.gz").matches());
        assertTrue(SandboxPaths.glob("a?c.[t]").matcher("abc.[t]").matches(), "brackets are literal");
        assertEquals("out/data", SandboxPaths.literalPrefix("out/data/*/x.json"));
        assertEquals("", SandboxPaths.literalPrefix("*.png"));
        assertThrows(IllegalArgumentException.class, () -> SandboxPaths.glob("../*.png"));
    }

    @Test
    void mediaTypesComeFromTheNameAndFilesReportTheirCut() {
        assertEquals("image/png", MediaTypes.guess("out/Chart.PNG"));
        assertEquals("application/octet-stream", MediaTypes.guess("out/.png"));
        assertEquals("application/octet-stream", MediaTypes.guess("Makefile"));
        SandboxFile f = SandboxFile.builder("./a.svg").content(new byte[] {1, 2}).size(10).build();
        assertEquals("a.svg", f.path());
        assertEquals("image/svg+xml", f.mediaType());
        assertTrue(f.truncated());
        assertThrows(IllegalArgumentException.class, () -> SandboxFile.builder("a").content(new byte[3]).size(2).build());
    }
}
