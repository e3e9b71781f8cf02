package dev.sandbox4j.docker.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** DOCKER_HOST as Docker's own clients read it, and a refusal that says what works for what is not supported. */
class EndpointTest {
    @Test
    void unixAndTcpAreParsed() {
        DockerSettings.Endpoint u = DockerSettings.Endpoint.parse("unix:///run/user/1000/podman/podman.sock");
        assertEquals(Path.of("/run/user/1000/podman/podman.sock"), u.socket());
        DockerSettings.Endpoint t = DockerSettings.Endpoint.parse("tcp://127.0.0.1:2375");
        assertNull(t.socket());
        assertEquals("http://127.0.0.1:2375/", t.baseUrl().toString());
    }

    @Test
    void namedPipesTlsAndSshAreRefusedWithWhatWorks() {
        IllegalArgumentException pipe = assertThrows(IllegalArgumentException.class,
                () -> DockerSettings.Endpoint.parse("npipe:////./pipe/docker_engine"));
        assertTrue(pipe.getMessage().contains("tcp://localhost:2375") && pipe.getMessage().contains("WSL2"), pipe.getMessage());
        IllegalArgumentException ssh = assertThrows(IllegalArgumentException.class, () -> DockerSettings.Endpoint.parse("ssh://me@host"));
        assertTrue(ssh.getMessage().contains("SSH tunnel"), ssh.getMessage());
        IllegalArgumentException tls = assertThrows(IllegalArgumentException.class, () -> DockerSettings.Endpoint.fromEnv(
                Map.of("DOCKER_HOST", "tcp://h:2376", "DOCKER_TLS_VERIFY", "1")));
        assertTrue(tls.getMessage().contains("plain HTTP"), tls.getMessage());
    }

    @Test
    void withoutDockerHostTheUsualSocketsAreTriedInOrder() {
        Map<String, String> env = Map.of("HOME", "/home/u", "XDG_RUNTIME_DIR", "/run/user/1000");
        assertEquals(Path.of("/var/run/docker.sock"), DockerSettings.Endpoint.candidates(env).get(0));
        assertTrue(DockerSettings.Endpoint.candidates(env).contains(Path.of("/home/u/.docker/run/docker.sock")));
        assertTrue(DockerSettings.Endpoint.candidates(env).contains(Path.of("/home/u/.colima/default/docker.sock")));
        assertTrue(DockerSettings.Endpoint.candidates(env).contains(Path.of("/run/user/1000/podman/podman.sock")));
    }
}
