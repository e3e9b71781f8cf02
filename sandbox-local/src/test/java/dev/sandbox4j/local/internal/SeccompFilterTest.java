package dev.sandbox4j.local.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class SeccompFilterTest {
    private static final Pattern DEFINE = Pattern.compile("^#define __NR(?:3264)?_(\\w+)\\s+(\\d+)\\s*$", Pattern.MULTILINE);

    /** aarch64 uses the generic table; it cannot run here, so its numbers are checked against the kernel headers. */
    @Test
    void theAarch64TableMatchesTheGenericKernelHeader() throws IOException {
        Path header = Path.of("/usr/include/asm-generic/unistd.h");
        assumeTrue(Files.isRegularFile(header), "needs linux-libc-dev");
        assertTableMatches(SeccompFilter.Arch.AARCH64, header);
    }

    @Test
    void theX8664TableMatchesItsKernelHeader() throws IOException {
        Optional<Path> header = List.of("/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h")
                .stream().map(Path::of).filter(Files::isRegularFile).findFirst();
        assumeTrue(header.isPresent(), "needs linux-libc-dev for x86_64");
        assertTableMatches(SeccompFilter.Arch.X86_64, header.get());
    }

    private static void assertTableMatches(SeccompFilter.Arch arch, Path header) throws IOException {
        Map<String, Integer> defined = new HashMap<>();
        Matcher m = DEFINE.matcher(Files.readString(header));
        while (m.find()) {
            defined.putIfAbsent(m.group(1), Integer.parseInt(m.group(2)));
        }
        for (String call : SeccompFilter.DENIED) {
            assertEquals(defined.get(call), arch.number(call), call + " on " + arch);
        }
        assertEquals(defined.get("clone"), arch.number("clone"));
        assertEquals(defined.get("clone3"), arch.number("clone3"));
        assertEquals(defined.get("socket"), arch.number("socket"));
        assertEquals(defined.get("socketpair"), arch.number("socketpair"));
    }

    /** The family numbers of the socket table, against glibc's header (PF_x, which AF_x is). */
    @Test
    void theSocketFamilyTableMatchesTheHeader() throws IOException {
        Optional<Path> header = List.of("/usr/include/x86_64-linux-gnu/bits/socket.h", "/usr/include/aarch64-linux-gnu/bits/socket.h")
                .stream().map(Path::of).filter(Files::isRegularFile).findFirst();
        assumeTrue(header.isPresent(), "needs libc6-dev");
        Map<String, Integer> defined = new HashMap<>();
        // "#define PF_INET 2", or an alias: "#define PF_UNIX PF_LOCAL"
        Matcher m = Pattern.compile("^#define\\s+PF_(\\w+)\\s+(\\w+)", Pattern.MULTILINE).matcher(Files.readString(header.get()));
        Map<String, String> raw = new HashMap<>();
        while (m.find()) {
            raw.put(m.group(1), m.group(2));
        }
        raw.forEach((name, value) -> {
            String v = value;
            for (int i = 0; i < 4 && v.startsWith("PF_"); i++) {
                v = raw.getOrDefault(v.substring(3), "");
            }
            if (v.matches("\\d+")) {
                defined.put("AF_" + name, Integer.parseInt(v));
            }
        });
        Map<String, Integer> all = new HashMap<>(SeccompFilter.ALLOWED_SOCKET_FAMILIES);
        all.putAll(SeccompFilter.EXAMPLE_DENIED_SOCKET_FAMILIES);
        all.forEach((name, number) -> assertEquals(defined.get(name), number, name));
        assertTrue(SeccompFilter.ALLOWED_SOCKET_FAMILIES.keySet().stream()
                .noneMatch(SeccompFilter.EXAMPLE_DENIED_SOCKET_FAMILIES::containsKey));
    }

    @Test
    void theProgramChecksTheArchFirstAndEndsWithAllowEpermEnosysEafnosupport() {
        for (SeccompFilter.Arch arch : SeccompFilter.Arch.values()) {
            byte[] p = SeccompFilter.compile(arch);
            assertEquals(0, p.length % 8);
            assertTrue(p.length / 8 < 64, "small: " + p.length / 8 + " instructions");
            ByteBuffer b = ByteBuffer.wrap(p).order(ByteOrder.nativeOrder());
            assertEquals(0x20, b.getShort(0), "load arch");
            assertEquals(4, b.getInt(4));
            assertEquals(0x15, b.getShort(8), "compare arch");
            int end = p.length - 32;
            assertEquals(0x7fff0000, b.getInt(end + 4), "allow");
            assertEquals(0x00050000 | SeccompFilter.EPERM, b.getInt(end + 12), "EPERM");
            assertEquals(0x00050000 | SeccompFilter.ENOSYS, b.getInt(end + 20), "ENOSYS");
            assertEquals(0x00050000 | SeccompFilter.EAFNOSUPPORT, b.getInt(end + 28), "EAFNOSUPPORT");
            // every jump lands inside the program
            for (int i = 0; i < p.length / 8; i++) {
                if ((b.getShort(i * 8) & 0x07) != 0x05) {
                    continue; // not a jump
                }
                int jt = p[i * 8 + 2] & 0xff;
                int jf = p[i * 8 + 3] & 0xff;
                assertTrue(i + 1 + Math.max(jt, jf) < p.length / 8, "jump out of range at " + i);
            }
        }
        assertTrue(SeccompFilter.Arch.of("amd64").isPresent() && SeccompFilter.Arch.of("aarch64").isPresent());
        assertTrue(SeccompFilter.Arch.of("riscv64").isEmpty(), "no table: the runner refuses to start");
    }
}
