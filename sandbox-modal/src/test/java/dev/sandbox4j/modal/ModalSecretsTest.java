package dev.sandbox4j.modal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxSpec;
import io.grpc.Status;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The token id and secret and the router JWT stay out of logs (debug level), messages and toString(). */
class ModalSecretsTest extends ModalTestBase {
    private final ByteArrayOutputStream captured = new ByteArrayOutputStream();
    private final List<String> texts = new ArrayList<>();
    private PrintStream originalErr;

    @BeforeEach
    void capture() {
        originalErr = System.err;
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    }

    @AfterEach
    void restore() {
        System.setErr(originalErr);
    }

    @Test
    void secretsAppearNowhere() {
        texts.add(runner.toString());
        texts.add(builder().toString());
        texts.add(runner.run(RunRequest.python("print(1)")).toString());
        // failures whose server descriptions echo the credentials
        fake.fail("SandboxCreateV2", Status.INVALID_ARGUMENT.withDescription("bad request from " + TOKEN_ID + " " + TOKEN_SECRET));
        texts.add(assertThrows(SandboxException.class, () -> runner.run(RunRequest.python("print(1)"))).getMessage());
        fake.fail("TaskExecStart", Status.INTERNAL.withDescription("boom " + TOKEN_SECRET));
        SandboxException e = assertThrows(SandboxException.class, () -> runner.run(RunRequest.python("print(1)")));
        texts.add(e.getMessage());
        texts.add(String.valueOf(e));
        fake.script.hang = true;
        fake.script.endlessStdout = true;
        texts.add(runner.run(RunRequest.of(SandboxSpec.defaults(),
                Execution.builder("1").hardCapBytes(1 << 16).build())).toString());
        runner.close();
        texts.add(captured.toString(StandardCharsets.UTF_8));
        assertTrue(captured.size() > 0, "debug logging was on");
        for (String t : texts) {
            assertFalse(t.contains(TOKEN_SECRET), t);
            assertFalse(t.contains(TOKEN_ID), t);
            assertFalse(t.contains(fake.routerJwt), t);
            assertFalse(t.contains(fake.authToken), t);
        }
    }
}
