package dev.sandbox4j.examples.charts;

import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxFile;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.tool.CodeExecutionTool;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A chart made by model-written code reaching the application, while the model sees only its name:
 * the tool collects what the code writes under {@code out/}; {@code onResult} hands the files (bytes
 * and all) to the application, and the tool's answer to the model lists names, sizes and media types.
 */
public final class ChartExample {
    /** What a model might write: a bar chart as a PNG, with Python's standard library only. */
    public static final String MODEL_CODE = String.join("\n",
            "import os, struct, zlib",
            "values = [3, 7, 5, 9]",
            "w, h = 40, 30",
            "rows = []",
            "for y in range(h):",
            "    row = bytearray([0])",
            "    for x in range(w):",
            "        bar, inside = x // 10, (x % 10) < 8",
            "        lit = inside and (h - y) <= values[bar] * 3",
            "        row += bytes([30, 90, 200] if lit else [255, 255, 255])",
            "    rows.append(bytes(row))",
            "def chunk(t, d):",
            "    return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)",
            "png = b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0))",
            "png += chunk(b'IDAT', zlib.compress(b''.join(rows))) + chunk(b'IEND', b'')",
            "os.makedirs('out', exist_ok=True)",
            "open('out/chart.png', 'wb').write(png)",
            "print('chart written')",
            "");

    private final CodeExecutionTool tool;
    private final List<SandboxFile> delivered = new CopyOnWriteArrayList<>();

    public ChartExample(SandboxRunner runner) {
        this.tool = CodeExecutionTool.builder(runner)
                .collectFiles("out")
                .onResult(this::deliver)
                .build();
    }

    /** Where the application receives the files: here it keeps them; a UI would show the PNG. */
    private void deliver(RunResult result) {
        delivered.addAll(result.files());
    }

    /** The model's tool call; returns what the model reads. */
    public String modelCalls(String code) {
        return tool.execute(code, "python", 30);
    }

    /** The files that reached the application. */
    public List<SandboxFile> delivered() {
        return delivered;
    }
}
