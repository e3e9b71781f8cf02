package dev.sandbox4j.daytona.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The session log's stream markers removed, whatever frame boundaries split them. */
class SessionLogDemuxTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private SessionLogStream.Demux demux() {
        return new SessionLogStream.Demux((stderr, b, off, len) -> {
            (stderr ? err : out).write(b, off, len);
            return true;
        });
    }

    private static byte[] log() {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(new byte[] {1, 1, 1});
        b.writeBytes("h\u00e9llo\n".getBytes(StandardCharsets.UTF_8));
        b.writeBytes(new byte[] {2, 2, 2});
        b.writeBytes("oops \u0001\u0001 \u0002\n".getBytes(StandardCharsets.UTF_8)); // marker bytes, too few to be one
        b.writeBytes(new byte[] {1, 1, 1});
        b.writeBytes("end\n".getBytes(StandardCharsets.UTF_8));
        return b.toByteArray();
    }

    @Test
    void everySplitOfTheLogGivesTheSameStreams() {
        byte[] log = log();
        for (int cut1 = 0; cut1 <= log.length; cut1++) {
            for (int cut2 = cut1; cut2 <= log.length; cut2 += 3) {
                out.reset();
                err.reset();
                SessionLogStream.Demux d = demux();
                assertTrue(d.accept(log, 0, cut1));
                assertTrue(d.accept(log, cut1, cut2 - cut1));
                assertTrue(d.accept(log, cut2, log.length - cut2));
                assertTrue(d.flush());
                assertEquals("h\u00e9llo\nend\n", out.toString(StandardCharsets.UTF_8), "cuts " + cut1 + "," + cut2);
                assertEquals("oops \u0001\u0001 \u0002\n", err.toString(StandardCharsets.UTF_8), "cuts " + cut1 + "," + cut2);
            }
        }
    }

    @Test
    void aPartialMarkerAtTheEndIsPayloadAndARefusalStops() {
        SessionLogStream.Demux d = demux();
        assertTrue(d.accept(new byte[] {1, 1, 1, 'a', 1, 1}, 0, 6));
        assertEquals("a", out.toString(StandardCharsets.UTF_8));
        assertTrue(d.flush());
        assertEquals("a\u0001\u0001", out.toString(StandardCharsets.UTF_8));
        SessionLogStream.Demux full = new SessionLogStream.Demux((stderr, b, off, len) -> false);
        assertFalse(full.accept(new byte[] {1, 1, 1, 'x'}, 0, 4));
    }

    @Test
    void bytesBeforeAnyMarkerBelongToNoStream() {
        SessionLogStream.Demux d = demux();
        assertTrue(d.accept("stray".getBytes(StandardCharsets.UTF_8), 0, 5));
        assertTrue(d.accept(new byte[] {2, 2, 2, 'e'}, 0, 4));
        assertEquals("", out.toString(StandardCharsets.UTF_8));
        assertEquals("e", err.toString(StandardCharsets.UTF_8));
    }

    private static final byte[] NONCE = (DaytonaDriver.END_FRAME + "00112233445566778899aabbccddeeff:").getBytes(StandardCharsets.UTF_8);

    /** An end frame, split anywhere, ends the stream with its exit code; the bytes around it are payload, those after it dropped. */
    @Test
    void anEndFrameSplitAnywhereEndsItsStream() {
        byte[] stream = ("a\u001fb\u001f" + new String(NONCE, StandardCharsets.UTF_8).substring(0, 5) + "x"
                + new String(NONCE, StandardCharsets.UTF_8) + "12\nafter").getBytes(StandardCharsets.UTF_8);
        String payload = "a\u001fb\u001f" + new String(NONCE, StandardCharsets.UTF_8).substring(0, 5) + "x";
        for (int cut1 = 0; cut1 <= stream.length; cut1++) {
            for (int cut2 = cut1; cut2 <= stream.length; cut2++) {
                out.reset();
                SessionLogStream.EndFrame f = new SessionLogStream.EndFrame(NONCE, false, (stderr, b, off, len) -> {
                    out.write(b, off, len);
                    return true;
                });
                assertTrue(f.accept(stream, 0, cut1));
                assertTrue(f.accept(stream, cut1, cut2 - cut1));
                assertTrue(f.accept(stream, cut2, stream.length - cut2));
                assertTrue(f.flush());
                assertTrue(f.ended, "cuts " + cut1 + "," + cut2);
                assertEquals(12, f.code, "cuts " + cut1 + "," + cut2);
                assertEquals(payload, out.toString(StandardCharsets.UTF_8), "cuts " + cut1 + "," + cut2);
            }
        }
    }

    @Test
    void aPartialEndFrameIsPayloadAndAFrameWithoutDigitsHasNoCode() {
        SessionLogStream.EndFrame f = new SessionLogStream.EndFrame(NONCE, true, (stderr, b, off, len) -> {
            (stderr ? err : out).write(b, off, len);
            return true;
        });
        assertTrue(f.accept(NONCE, 0, 10));
        assertEquals("", err.toString(StandardCharsets.UTF_8), "held");
        assertTrue(f.flush());
        assertEquals(new String(NONCE, 0, 10, StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        assertFalse(f.ended);
        SessionLogStream.EndFrame g = new SessionLogStream.EndFrame(NONCE, true, (stderr, b, off, len) -> true);
        byte[] bare = (new String(NONCE, StandardCharsets.UTF_8) + "\n").getBytes(StandardCharsets.UTF_8);
        assertTrue(g.accept(bare, 0, bare.length));
        assertTrue(g.ended);
        assertEquals(null, g.code);
    }
}
