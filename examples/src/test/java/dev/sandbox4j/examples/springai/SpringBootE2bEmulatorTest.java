package dev.sandbox4j.examples.springai;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.emulators.e2b.E2bEmulator;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.spring.ProviderEnvironment;
import java.util.Map;
import kotlin.KotlinVersion;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;

/**
 * The example application on a hosted adapter (E2B, over OkHttp) against the E2B emulator, with the
 * dependencies Spring Boot's BOM manages, as a user's project gets them (sandbox4j-bom imported
 * first): the Kotlin that OkHttp 5 needs resolves, and a real call goes through.
 */
class SpringBootE2bEmulatorTest {
    private static final String KEY = "e2b_0123456789abcdef0123456789abcdef01234567";

    @Test
    void theApplicationRunsTheModelsCodeOnE2b() throws Exception {
        assertTrue(KotlinVersion.CURRENT.isAtLeast(2, 1), "kotlin-stdlib on the classpath: " + KotlinVersion.CURRENT);
        ScriptedChatModel model = new ScriptedChatModel()
                .toolCalls(new String[] {"call-1", "{\"code\": \"print(sum(range(101)))\"}"})
                .answer("5050");
        try (LocalSandboxRunner local = LocalSandboxRunner.builder().maxAddressSpaceMib(2048).build();
                E2bEmulator emulator = E2bEmulator.builder().apiKey(KEY).localRunner(local).build()) {
            ProviderEnvironment env = () -> Map.of("E2B_API_KEY", KEY, "E2B_API_URL", emulator.baseUrl(),
                    "E2B_SANDBOX_URL", emulator.baseUrl());
            try (ConfigurableApplicationContext app = new SpringApplicationBuilder(SpringAiExample.class)
                    .properties("spring.main.banner-mode=off", "spring.main.web-application-type=none")
                    .initializers(context -> {
                        GenericApplicationContext c = (GenericApplicationContext) context;
                        c.registerBean(ChatModel.class, () -> model);
                        c.registerBean(ProviderEnvironment.class, () -> env);
                    })
                    .run("--sandbox4j.provider=e2b")) {
                assertEquals("e2b", app.getBean(SandboxRunner.class).name());
                assertEquals("5050", app.getBean(ChatClient.class).prompt("Sum 0..100.").call().content());
                String text = SpringAiToolTest.toolResponse(model);
                assertTrue(text.contains(">\n5050\n</stdout marker="), text);
            }
            assertEquals(1, emulator.ledger().created());
            assertEquals(0, emulator.ledger().live(), "leaked: " + emulator.ledger().liveIds());
        }
    }
}
