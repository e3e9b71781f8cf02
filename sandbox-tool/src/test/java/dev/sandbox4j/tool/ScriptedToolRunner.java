package dev.sandbox4j.tool;

import dev.sandbox4j.api.Attempt;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Language;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A runner that plays a script instead of running code, and records what the tool asked of it. */
final class ScriptedToolRunner implements SandboxRunner {
    /** What one exec does: return a result or throw. */
    @FunctionalInterface
    interface Step {
        RunResult run(Execution execution);
    }

    static final Capabilities FULL = Capabilities.builder("scripted")
            .egress(Capabilities.Egress.DENY_ALL, Capabilities.Egress.ALLOW_ALL, Capabilities.Egress.DEFAULT_DENY_WITH_RULES,
                    Capabilities.Egress.ALLOW_DOMAINS, Capabilities.Egress.ALLOW_WILDCARD_DOMAINS, Capabilities.Egress.LIVE_UPDATE)
            .limits(Capabilities.Limit.LIFETIME)
            .features(Capabilities.Feature.SEPARATE_STDERR, Capabilities.Feature.SESSIONS, Capabilities.Feature.SETUP_COMMANDS,
                    Capabilities.Feature.INPUT_FILES, Capabilities.Feature.ENV)
            .languages(Language.PYTHON, Language.JAVASCRIPT, Language.BASH)
            .build();

    private final Capabilities capabilities;
    private final Deque<RuntimeException> openFailures = new ArrayDeque<>();
    private final Deque<Step> steps = new ArrayDeque<>();
    private Step fallback = e -> exited(0, "", "");
    final List<SandboxSpec> specs = new CopyOnWriteArrayList<>();
    final List<Execution> executions = new CopyOnWriteArrayList<>();
    final List<ScriptedSandbox> sandboxes = new CopyOnWriteArrayList<>();

    ScriptedToolRunner() {
        this(FULL);
    }

    ScriptedToolRunner(Capabilities capabilities) {
        this.capabilities = capabilities;
    }

    static RunResult exited(int code, String stdout, String stderr) {
        return RunResult.builder().status(RunStatus.EXITED).exitCode(code).stdout(stdout).stderr(stderr)
                .stdoutBytes(stdout.getBytes(java.nio.charset.StandardCharsets.UTF_8).length)
                .stderrBytes(stderr.getBytes(java.nio.charset.StandardCharsets.UTF_8).length)
                .duration(Duration.ofMillis(412)).provider("scripted").sandboxId("sb").build();
    }

    /** The next open throws {@code e}. */
    synchronized ScriptedToolRunner failOpen(RuntimeException e) {
        openFailures.add(e);
        return this;
    }

    /** The next exec (in whichever sandbox) does {@code step}. */
    synchronized ScriptedToolRunner then(Step step) {
        steps.add(step);
        return this;
    }

    /** Every exec with no step queued does {@code step}. */
    synchronized ScriptedToolRunner always(Step step) {
        this.fallback = step;
        return this;
    }

    int opened() {
        return sandboxes.size();
    }

    ScriptedSandbox last() {
        return sandboxes.get(sandboxes.size() - 1);
    }

    @Override
    public String name() {
        return "scripted";
    }

    @Override
    public Capabilities capabilities() {
        return capabilities;
    }

    @Override
    public synchronized Sandbox open(SandboxSpec spec) {
        specs.add(spec);
        RuntimeException failure = openFailures.poll();
        if (failure != null) {
            throw failure;
        }
        ScriptedSandbox sandbox = new ScriptedSandbox("sb-" + (sandboxes.size() + 1));
        sandboxes.add(sandbox);
        return sandbox;
    }

    private synchronized Step nextStep() {
        Step s = steps.poll();
        return s == null ? fallback : s;
    }

    final class ScriptedSandbox implements Sandbox {
        private final String id;
        volatile boolean closed;
        volatile int closeCalls;
        volatile boolean interruptedAtClose;
        final List<Runnable> onClose = new CopyOnWriteArrayList<>();

        ScriptedSandbox(String id) {
            this.id = id;
        }

        @Override
        public String id() {
            return id;
        }

        @Override
        public String provider() {
            return "scripted";
        }

        @Override
        public String runId() {
            return "r" + id;
        }

        @Override
        public List<Attempt> attempts() {
            return List.of(Attempt.succeeded("scripted", Duration.ZERO));
        }

        @Override
        public RunResult exec(Execution execution) {
            if (closed) {
                throw new IllegalStateException("sandbox " + id + " is closed");
            }
            executions.add(execution);
            return nextStep().run(execution);
        }

        @Override
        public boolean isClosed() {
            return closed;
        }

        @Override
        public Teardown teardown() {
            return closed ? Teardown.DESTROYED : Teardown.OPEN;
        }

        @Override
        public void close() {
            closeCalls++;
            interruptedAtClose |= Thread.currentThread().isInterrupted();
            closed = true;
            onClose.forEach(Runnable::run);
        }
    }
}
