package dev.sandbox4j.apicheck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.LifecycleEvent;
import dev.sandbox4j.api.LifecycleListener;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.daytona.DaytonaSandboxRunner;
import dev.sandbox4j.docker.DockerSandboxRunner;
import dev.sandbox4j.e2b.E2bSandboxRunner;
import dev.sandbox4j.kubernetes.KubernetesSandboxRunner;
import dev.sandbox4j.modal.ModalSandboxRunner;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.spi.RunnerBuilder;
import dev.sandbox4j.vercel.VercelSandboxRunner;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.stream.Collectors;
import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every remote adapter's builder takes the lifecycle settings from {@link RunnerBuilder}, and what is set
 * there reaches the lifecycle: a create that certainly created nothing (a port that refuses connections;
 * for Docker, an engine that answers 429) is tried exactly {@code maxCreateAttempts} times, as the
 * listener set on the same builder hears it, with the retry base delay set there (1 ms, so the test is
 * quick).
 */
class RunnerBuilderParityTest {

    /**
     * An engine that answers the Docker runner's checks (version, the image, the sweep's listings) and
     * refuses every container create with 429, which certainly created nothing.
     */
    private static final HttpServer ENGINE = engine();

    private static HttpServer engine() {
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 0);
            server.createContext("/", exchange -> {
                String path = exchange.getRequestURI().getPath();
                int status = 200;
                String body = "{}";
                if (path.endsWith("/version")) {
                    body = "{\"Version\":\"test\",\"ApiVersion\":\"1.41\",\"Os\":\"linux\",\"Arch\":\"amd64\"}";
                } else if (path.endsWith("/containers/json")) {
                    body = "[]";
                } else if (path.endsWith("/volumes")) {
                    body = "{\"Volumes\":[]}";
                } else if (path.endsWith("/containers/create")) {
                    status = 429;
                    body = "{\"message\":\"too many requests\"}";
                } else if (!path.contains("/images/")) {
                    status = 404;
                    body = "{\"message\":\"not in this test\"}";
                }
                byte[] bytes = body.getBytes(java.nio.charset.StandardCharsets.UTF_8);
                exchange.getResponseHeaders().add("Content-Type", "application/json");
                exchange.sendResponseHeaders(status, bytes.length);
                exchange.getResponseBody().write(bytes);
                exchange.close();
            });
            server.start();
            return server;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @AfterAll
    static void stopEngine() {
        ENGINE.stop(0);
    }

    static List<Object[]> adapters() {
        List<Object[]> all = new ArrayList<>();
        all.add(new Object[] {"e2b", E2bSandboxRunner.Builder.class,
                (Function<String, RunnerBuilder<?>>) url -> E2bSandboxRunner.builder().apiKey("e2b_test").apiUrl(url)
                        .sandboxUrl(url)});
        all.add(new Object[] {"vercel", VercelSandboxRunner.Builder.class,
                (Function<String, RunnerBuilder<?>>) url -> VercelSandboxRunner.builder().token("tok").teamId("team_x")
                        .projectId("prj_x").baseUrl(url)});
        all.add(new Object[] {"daytona", DaytonaSandboxRunner.Builder.class,
                (Function<String, RunnerBuilder<?>>) url -> DaytonaSandboxRunner.builder().apiKey("dtn_test").apiUrl(url)});
        all.add(new Object[] {"modal", ModalSandboxRunner.Builder.class,
                (Function<String, RunnerBuilder<?>>) url -> ModalSandboxRunner.builder().tokenId("ak-test")
                        .tokenSecret("as-test").serverUrl(url)});
        // an engine must answer before a create is tried (else the runner says to start one): see engine()
        all.add(new Object[] {"docker", DockerSandboxRunner.Builder.class,
                (Function<String, RunnerBuilder<?>>) url -> DockerSandboxRunner.builder()
                        .dockerHost("tcp://127.0.0.1:" + ENGINE.getAddress().getPort())});
        all.add(new Object[] {"kubernetes", KubernetesSandboxRunner.Builder.class,
                (Function<String, RunnerBuilder<?>>) url -> KubernetesSandboxRunner.builder().masterUrl(url)
                        .namespace("default").networkPolicyEnforced(true)});
        return all;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("adapters")
    void theBuilderDeclaresNoLifecycleSetterOfItsOwn(String name, Class<?> builder, Function<String, RunnerBuilder<?>> unused) {
        assertEquals(RunnerBuilder.class, builder.getSuperclass(), name + "'s builder extends RunnerBuilder");
        Set<String> shared = Arrays.stream(RunnerBuilder.class.getDeclaredMethods())
                .filter(m -> Modifier.isPublic(m.getModifiers())).map(Method::getName).collect(Collectors.toSet());
        List<String> own = Arrays.stream(builder.getDeclaredMethods())
                .filter(m -> shared.contains(m.getName()) && !m.isBridge()).map(Method::toString).toList();
        assertEquals(List.of(), own, name + "'s builder redeclares a lifecycle setter (it would skip the shared checks)");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("adapters")
    void whatTheBuilderSetsReachesTheLifecycle(String name, Class<?> builder, Function<String, RunnerBuilder<?>> make)
            throws Exception {
        String url = "http://127.0.0.1:" + refusedPort();
        assertEquals(List.of(1), createAttempts(make.apply(url), 1), name + ": maxCreateAttempts(1)");
        assertEquals(List.of(3), createAttempts(make.apply(url), 3), name + ": maxCreateAttempts(3)");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("adapters")
    void badLifecycleValuesAreRefusedByTheSetter(String name, Class<?> builder, Function<String, RunnerBuilder<?>> make) {
        RunnerBuilder<?> b = make.apply("http://127.0.0.1:9");
        assertThrows(IllegalArgumentException.class, () -> b.maxCreateAttempts(0), name);
        assertThrows(IllegalArgumentException.class, () -> b.owner("no spaces"), name);
        assertThrows(IllegalArgumentException.class, () -> b.lostCreateWindow(Duration.ZERO), name);
        assertThrows(IllegalArgumentException.class, () -> b.teardownTimeout(Duration.ofSeconds(-1)), name);
        assertThrows(IllegalArgumentException.class, () -> b.retryBaseDelay(null), name);
        assertThrows(NullPointerException.class, () -> b.lifecycleListener(null), name);
    }

    /** The attempts the create events of one failed open carried. */
    private static List<Integer> createAttempts(RunnerBuilder<?> b, int maxAttempts) throws Exception {
        List<LifecycleEvent> events = new CopyOnWriteArrayList<>();
        LifecycleListener listener = new LifecycleListener() {
            @Override
            public Operation started(LifecycleEvent.Phase phase, String provider) {
                return events::add;
            }
        };
        b.maxCreateAttempts(maxAttempts).retryBaseDelay(Duration.ofMillis(1)).lifecycleListener(listener)
                .owner("parity-test").lostCreateWindow(Duration.ofSeconds(5)).teardownTimeout(Duration.ofSeconds(5));
        try (SandboxRunner runner = build(b)) {
            SandboxException e = assertThrows(SandboxException.class, () -> runner.open(SandboxSpec.builder()
                    .egress(EgressPolicy.denyAll()).defaultLifetime(Duration.ofMinutes(1)).build()).close());
            assertTrue(events.stream().allMatch(ev -> !ev.succeeded()), () -> "events " + events + " for " + e);
            assertTrue(e.isRetriable() && !e.requestMayHaveSucceeded(), () -> "a certain, retriable failure: " + e);
            return events.stream().filter(ev -> ev.phase() == LifecycleEvent.Phase.CREATE).map(LifecycleEvent::attempts)
                    .toList();
        }
    }

    private static SandboxRunner build(RunnerBuilder<?> b) throws Exception {
        return (SandboxRunner) b.getClass().getMethod("build").invoke(b);
    }

    private static int refusedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
