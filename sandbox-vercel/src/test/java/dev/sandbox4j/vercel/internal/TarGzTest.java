package dev.sandbox4j.vercel.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox4j.http.HttpTransport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TarGzTest {
    static final String LONG_SPLITTABLE = "vercel/sandbox/" + "d".repeat(60) + "/" + "f".repeat(90) + ".txt";
    static final String LONG_UNSPLITTABLE = "vercel/" + "x".repeat(180) + ".txt";

    @Test
    void headersMatchWhatTheOfficialSdkSends() throws IOException {
        byte[] content = "console.log('hi');\nconsole.error('err');\n".getBytes(StandardCharsets.UTF_8);
        byte[] gz = new TarGz(1_795_944_651L).add(TarGz.Entry.file("vercel/sandbox/hello.js", 0644, content)).toBytes();
        assertEquals(0x1f, gz[0] & 0xff);
        assertEquals(0x8b, gz[1] & 0xff);
        List<TarReader.Member> members = TarReader.read(gz);
        assertEquals(1, members.size());
        JsonNode recorded = HttpTransport.JSON.readTree(getClass().getResourceAsStream(
                "/recordings/vercel-a-deny-all-write-run-stop.json")).get(1).path("body");
        JsonNode entry = recorded.path("entries").get(0);
        TarReader.Member m = members.get(0);
        assertEquals(entry.path("name").asText(), m.name);
        assertEquals(entry.path("mode").asText(), String.format("%04o", m.mode));
        assertEquals(entry.path("uid").asInt(), m.uid);
        assertEquals(entry.path("gid").asInt(), m.gid);
        assertEquals(entry.path("uname").asText(), m.uname);
        assertEquals(entry.path("gname").asText(), m.gname);
        assertEquals(entry.path("size").asInt(), m.content.length);
        assertEquals(entry.path("contentUtf8").asText(), new String(m.content, StandardCharsets.UTF_8));
        assertEquals('0', m.type);
        assertEquals(recorded.path("tarBytes").asInt(), TarReader.tarLength(gz), "two zero blocks close the archive");
    }

    @Test
    void longNamesUsePrefixOrPax() throws IOException {
        byte[] gz = new TarGz(0)
                .add(TarGz.Entry.directory("vercel/sandbox/data", 0755))
                .add(TarGz.Entry.file(LONG_SPLITTABLE, 0644, "a".getBytes(StandardCharsets.UTF_8)))
                .add(TarGz.Entry.file(LONG_UNSPLITTABLE, 0600, new byte[1000]))
                .toBytes();
        List<TarReader.Member> m = TarReader.read(gz);
        assertEquals("vercel/sandbox/data/", m.get(0).name);
        assertEquals('5', m.get(0).type);
        assertEquals(LONG_SPLITTABLE, m.get(1).name);
        assertEquals(LONG_UNSPLITTABLE, m.get(2).name);
        assertEquals(0600, m.get(2).mode);
        assertArrayEquals(new byte[1000], m.get(2).content);
    }

    /** An independent reader: Python's tarfile module, when /usr/bin/python3 is there. */
    @Test
    void pythonsTarfileReadsItTheSame(@TempDir Path dir) throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "no /usr/bin/python3");
        byte[] nul = "x\0y".getBytes(StandardCharsets.UTF_8);
        Path archive = dir.resolve("a.tar.gz");
        Files.write(archive, new TarGz(1_700_000_000L)
                .add(TarGz.Entry.directory("vercel/sandbox/data", 0755))
                .add(TarGz.Entry.file("vercel/sandbox/data/in.txt", 0644, "héllo\n".getBytes(StandardCharsets.UTF_8)))
                .add(TarGz.Entry.file(LONG_SPLITTABLE, 0644, nul))
                .add(TarGz.Entry.file(LONG_UNSPLITTABLE, 0755, new byte[513]))
                .toBytes());
        String script = "import tarfile,sys,json\n"
                + "t=tarfile.open(sys.argv[1],'r:gz')\n"
                + "print(json.dumps([[m.name,m.type.decode(),oct(m.mode),m.size,m.uid,m.gid,m.mtime,"
                + "(t.extractfile(m).read().hex() if m.isfile() else None)] for m in t.getmembers()]))\n";
        Process p = new ProcessBuilder("/usr/bin/python3", "-c", script, archive.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(true, p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        JsonNode members = HttpTransport.JSON.readTree(out);
        assertEquals(4, members.size(), out);
        assertEquals("[\"vercel/sandbox/data\",\"5\",\"0o755\",0,0,0,1700000000,null]", members.get(0).toString());
        assertEquals("[\"vercel/sandbox/data/in.txt\",\"0\",\"0o644\",7,0,0,1700000000,\"68c3a96c6c6f0a\"]",
                members.get(1).toString());
        assertEquals(LONG_SPLITTABLE, members.get(2).get(0).asText());
        assertEquals("780079", members.get(2).get(7).asText());
        assertEquals(LONG_UNSPLITTABLE, members.get(3).get(0).asText());
        assertEquals("0o755", members.get(3).get(2).asText());
        assertEquals(513, members.get(3).get(3).asInt());
    }
}
