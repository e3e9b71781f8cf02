package dev.sandbox4j.local.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.spi.ManagedSandboxRunner;
import dev.sandbox4j.policy.EgressPolicy;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ForwarderPlumbingTest {
    @Test
    void plumbing() throws Exception {
        Path wr = Files.createTempDirectory("sandbox4j-test-");
        Files.setPosixFilePermissions(wr, PosixFilePermissions.fromString("rwx--x--x"));
        EgressGateway.Factory f = (policy, socket) -> {
            ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            s.bind(UnixDomainSocketAddress.of(socket));
            Thread t = new Thread(() -> {
                try {
                    while (true) {
                        SocketChannel c = s.accept();
                        ByteBuffer b = ByteBuffer.allocate(4096);
                        c.read(b);
                        String first = new String(b.array(), 0, b.position(), StandardCharsets.ISO_8859_1).split("\r\n")[0];
                        String body = "via-gateway " + first;
                        c.write(ByteBuffer.wrap(("HTTP/1.0 200 OK\r\nContent-Length: " + body.length() + "\r\n\r\n" + body)
                                .getBytes(StandardCharsets.ISO_8859_1)));
                        c.close();
                    }
                } catch (IOException e) {
                    // closed
                }
            });
            t.setDaemon(true);
            t.start();
            return new EgressGateway() {
                public Optional<String> caCertificatePem() {
                    return Optional.empty();
                }

                public void close() {
                    try {
                        s.close();
                    } catch (IOException ignored) {
                    }
                }
            };
        };
        LocalDriver d = new LocalDriver(LocalSettings.builder().workRoot(wr).egressGateways(f).build());
        try (SandboxRunner r = ManagedSandboxRunner.builder(d).maxCreateAttempts(1).build()) {
            String code = "import os, urllib.request\n"
                    + "print(urllib.request.urlopen('http://allowed.test/x', timeout=10).read().decode())\n"
                    + "print(os.environ.get('HTTPS_PROXY'))\n";
            RunResult res = r.run(RunRequest.of(SandboxSpec.builder().egress(EgressPolicy.allowOnly("allowed.test")).build(),
                    Execution.builder(code).budget(Duration.ofSeconds(30)).build()));
            System.out.println(res + "\n" + res.stdout() + res.stderr());
            assertTrue(res.stdout().contains("via-gateway GET http://allowed.test/x"), res.stdout() + res.stderr());
        }
    }
}
