package dev.sandbox4j.egress.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.List;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import org.junit.jupiter.api.Test;

/** The ClientHello reader against the JDK's own ClientHellos, whole and split over records. */
class ClientHelloTest {
    static byte[] hello(String sni) throws Exception {
        SSLEngine e = SSLContext.getDefault().createSSLEngine("x.test", 443);
        e.setUseClientMode(true);
        SSLParameters p = e.getSSLParameters();
        p.setServerNames(sni == null ? List.of() : List.of(new SNIHostName(sni)));
        e.setSSLParameters(p);
        ByteBuffer out = ByteBuffer.allocate(e.getSession().getPacketBufferSize());
        e.wrap(ByteBuffer.allocate(0), out);
        out.flip();
        byte[] b = new byte[out.remaining()];
        out.get(b);
        return b;
    }

    @Test
    void theServerNameIsFoundAndTheBytesKept() throws Exception {
        byte[] h = hello("Allowed.Test");
        ClientHello c = ClientHello.read(new ByteArrayInputStream(h));
        assertTrue(c.tls);
        assertEquals("allowed.test", c.serverName);
        assertArrayEquals(h, c.raw);
        assertNull(ClientHello.read(new ByteArrayInputStream(hello(null))).serverName);
    }

    @Test
    void aHelloSplitOverTwoRecordsIsReassembled() throws Exception {
        byte[] h = hello("split.test");
        int len = h.length - 5;
        int first = len / 2;
        ByteArrayOutputStream two = new ByteArrayOutputStream();
        two.write(new byte[] {0x16, 0x03, 0x01, (byte) (first >> 8), (byte) first});
        two.write(h, 5, first);
        int second = len - first;
        two.write(new byte[] {0x16, 0x03, 0x01, (byte) (second >> 8), (byte) second});
        two.write(h, 5 + first, second);
        ClientHello c = ClientHello.read(new ByteArrayInputStream(two.toByteArray()));
        assertEquals("split.test", c.serverName);
        assertArrayEquals(two.toByteArray(), c.raw);
    }

    @Test
    void plainTextIsNotTls() throws Exception {
        ClientHello c = ClientHello.read(new ByteArrayInputStream("GET / HTTP/1.1\r\n".getBytes()));
        assertFalse(c.tls);
        assertEquals(1, c.raw.length);
    }
}
