package dev.sandbox4j.examples.charts;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.SandboxFile;
import dev.sandbox4j.examples.LocalRunnerFixture;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Base64;
import org.junit.jupiter.api.Test;

class ChartExampleTest {
    @Test
    void theChartReachesTheApplicationAndOnlyItsNameReachesTheModel() throws Exception {
        try (LocalRunnerFixture local = new LocalRunnerFixture()) {
            ChartExample example = new ChartExample(local.runner());
            String toModel = example.modelCalls(ChartExample.MODEL_CODE);

            assertEquals(1, example.delivered().size(), toModel);
            SandboxFile chart = example.delivered().get(0);
            assertEquals("out/chart.png", chart.path());
            assertEquals("image/png", chart.mediaType());
            byte[] png = chart.content();
            assertArrayEquals(new byte[] {(byte) 0x89, 'P', 'N', 'G'}, Arrays.copyOf(png, 4));
            assertEquals(40, ByteBuffer.wrap(png, 16, 4).getInt());

            assertTrue(toModel.contains("- out/chart.png (image/png, " + png.length + " bytes)"), toModel);
            assertTrue(toModel.contains("chart written"), toModel);
            assertFalse(toModel.contains("PNG"), "raw bytes reached the model: " + toModel);
            assertFalse(toModel.contains(Base64.getEncoder().encodeToString(Arrays.copyOf(png, 24)).substring(0, 16)), toModel);
            assertEquals(0, local.leftovers());
        }
    }
}
