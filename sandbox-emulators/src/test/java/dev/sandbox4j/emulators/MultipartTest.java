package dev.sandbox4j.emulators;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class MultipartTest {
    /** The raw body the official SDK sent (recording daytona-b-allowlist-upload-exec.json). */
    private static final String SDK_BODY = "----------------------------e77e36d5697a6f7dc2dea6cc\r\n"
            + "Content-Disposition: form-data; name=\"files[0].path\"\r\n\r\n/tmp/main.py\r\n"
            + "----------------------------e77e36d5697a6f7dc2dea6cc\r\n"
            + "Content-Disposition: form-data; name=\"files[0].file\"; filename=\"main.py\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\nprint(\"hi\")\n\r\n"
            + "----------------------------e77e36d5697a6f7dc2dea6cc--\r\n";

    @Test
    void readsTheSdksUpload() throws Exception {
        String boundary = Multipart.boundary("multipart/form-data; boundary=--------------------------e77e36d5697a6f7dc2dea6cc");
        assertEquals("--------------------------e77e36d5697a6f7dc2dea6cc", boundary);
        List<Multipart.Part> parts = Multipart.parse(SDK_BODY.getBytes(StandardCharsets.UTF_8), boundary);
        assertEquals(2, parts.size());
        assertEquals("files[0].path", parts.get(0).name());
        assertNull(parts.get(0).filename());
        assertEquals("/tmp/main.py", parts.get(0).text());
        assertEquals("files[0].file", parts.get(1).name());
        assertEquals("main.py", parts.get(1).filename());
        assertEquals("print(\"hi\")\n", parts.get(1).text());
    }

    @Test
    void keepsBinaryContentThatLooksLikeADelimiter() throws Exception {
        byte[] content = new byte[300];
        for (int i = 0; i < content.length; i++) {
            content[i] = (byte) i;
        }
        byte[] tricky = "\r\n--bound\r\nnot a delimiter: --boundary-ish".getBytes(StandardCharsets.ISO_8859_1);
        byte[] file = new byte[content.length + tricky.length];
        System.arraycopy(content, 0, file, 0, content.length);
        System.arraycopy(tricky, 0, file, content.length, tricky.length);
        String b = "Boundary_42";
        byte[] head = ("--" + b + "\r\nContent-Disposition: form-data; name=\"files[0].file\"; filename=\"a \\\"b\\\".bin\"\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1);
        byte[] tail = ("\r\n--" + b + "--").getBytes(StandardCharsets.ISO_8859_1);
        byte[] body = new byte[head.length + file.length + tail.length];
        System.arraycopy(head, 0, body, 0, head.length);
        System.arraycopy(file, 0, body, head.length, file.length);
        System.arraycopy(tail, 0, body, head.length + file.length, tail.length);
        List<Multipart.Part> parts = Multipart.parse(body, Multipart.boundary("multipart/form-data; boundary=\"" + b + "\""));
        assertEquals(1, parts.size());
        assertEquals("a \"b\".bin", parts.get(0).filename());
        assertArrayEquals(file, parts.get(0).content());
    }

    @Test
    void refusesATruncatedBodyAndOtherContentTypes() {
        String truncated = SDK_BODY.substring(0, SDK_BODY.indexOf("print"));
        assertThrows(Multipart.MalformedException.class, () -> Multipart.parse(truncated.getBytes(StandardCharsets.UTF_8),
                "--------------------------e77e36d5697a6f7dc2dea6cc"));
        assertThrows(Multipart.MalformedException.class, () -> Multipart.parse("no delimiter".getBytes(StandardCharsets.UTF_8), "x"));
        assertNull(Multipart.boundary("application/json"));
        assertNull(Multipart.boundary("multipart/form-data"));
        assertNull(Multipart.boundary(null));
    }

    @Test
    void readsPaddingAHeaderlessPartAndTheBoundaryOfAnyMediaType() throws Exception {
        String contentType = "multipart/mixed; charset=utf-8; Boundary = \"b1\"";
        assertEquals("multipart/mixed", Multipart.mediaType(contentType));
        assertEquals("b1", Multipart.boundary(contentType));
        byte[] body = "--b1 \t\r\n\r\nno headers\r\n--b1\r\nContent-Disposition: form-data; name=file\r\n\r\nx\r\n--b1--"
                .getBytes(StandardCharsets.ISO_8859_1);
        List<Multipart.Part> parts = Multipart.parse(body, "b1");
        assertEquals(2, parts.size());
        assertNull(parts.get(0).name());
        assertEquals("no headers", parts.get(0).text());
        assertEquals("file", parts.get(1).name());
        assertEquals(1, parts.get(1).size());
        assertArrayEquals(new byte[] {'x'}, parts.get(1).content());
        Multipart.MalformedException e = assertThrows(Multipart.MalformedException.class,
                () -> Multipart.parse("--b1junk\r\n".getBytes(StandardCharsets.ISO_8859_1), "b1"));
        assertEquals("multipart: expecting a new Part; got line \"junk\"", e.getMessage());
    }
}
