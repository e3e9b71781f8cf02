package dev.sandbox4j.benchmarks.adapters;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The side-by-side table: per provider the SDK's row, the Java adapter's row and their ratio Java/SDK. */
final class Table {
    static final String[] HEAD = {"provider", "client", "median ms", "p99 ms", "CPU ms/cycle", "cycles/s",
        "cycles/s @16", "CPU ms/cycle @16", "requests/cycle", "errors"};

    private Table() {
    }

    static String render(List<AdapterBench.Result> results) {
        List<String[]> rows = new ArrayList<>();
        rows.add(HEAD);
        List<String> notes = new ArrayList<>();
        for (AdapterBench.Result r : results) {
            if (r.skipped != null) {
                rows.add(new String[] {r.provider, "not measured", "", "", "", "", "", "", "", ""});
                notes.add(r.provider + ": " + r.skipped);
                continue;
            }
            double[][] values = new double[2][];
            int i = 0;
            for (Map.Entry<String, Tally[]> e : r.tallies.entrySet()) {
                Tally[] t = e.getValue();
                double idle = r.idleTicksPerSecond.getOrDefault(e.getKey(), 0.0);
                double[] v = {t[0].medianMillis(), t[0].p99Millis(), t[0].cpuMillisPerCycle(idle), t[0].cyclesPerSecond(),
                    t[1].cyclesPerSecond(), t[1].cpuMillisPerCycle(idle), t[0].requestsPerCycle()};
                if (i < 2) {
                    values[i++] = v;
                }
                rows.add(row(r.provider, e.getKey() + " " + r.versions.getOrDefault(e.getKey(), ""), v,
                        Integer.toString(t[0].errors + t[1].errors)));
                if (t[0].requestsPerCycle() != t[1].requestsPerCycle() && t[1].requestsKnown) {
                    notes.add(String.format(Locale.ROOT, "%s %s: %.2f requests/cycle at 16 concurrent", r.provider,
                            e.getKey(), t[1].requestsPerCycle()));
                }
                if (!t[0].kinds.isEmpty()) {
                    notes.add(r.provider + " " + e.getKey() + " requests per cycle by kind: " + t[0].kindsPerCycle());
                }
                String fe = t[0].firstError != null ? t[0].firstError : t[1].firstError;
                if (fe != null) {
                    notes.add(r.provider + " " + e.getKey() + " first error: " + fe);
                }
                notes.add(String.format(Locale.ROOT, "%s %s idle CPU after warm-up: %.1f ms/s (subtracted)", r.provider,
                        e.getKey(), ProcStat.ticksToMillis(1) * idle));
            }
            if (i == 2) {
                double[] ratio = new double[values[0].length];
                for (int k = 0; k < ratio.length; k++) {
                    ratio[k] = values[1][k] / values[0][k];
                }
                rows.add(row(r.provider, "Java/SDK", ratio, ""));
            }
            r.emulatorReport.forEach(line -> notes.add(r.provider + " emulator at exit: " + line));
        }
        StringBuilder b = new StringBuilder(format(rows));
        for (String n : notes) {
            b.append("  ").append(n).append('\n');
        }
        return b.toString();
    }

    private static String[] row(String provider, String client, double[] v, String errors) {
        String[] r = new String[HEAD.length];
        r[0] = provider;
        r[1] = client;
        for (int k = 0; k < v.length; k++) {
            r[k + 2] = number(v[k]);
        }
        r[HEAD.length - 1] = errors;
        return r;
    }

    static String number(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            return "?";
        }
        double a = Math.abs(v);
        return String.format(Locale.ROOT, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : "%.2f", v);
    }

    /** Columns padded to their widest cell: text left, numbers right. */
    static String format(List<String[]> rows) {
        int[] w = new int[rows.get(0).length];
        for (String[] r : rows) {
            for (int k = 0; k < r.length; k++) {
                w[k] = Math.max(w[k], r[k].length());
            }
        }
        StringBuilder b = new StringBuilder();
        for (String[] r : rows) {
            StringBuilder line = new StringBuilder();
            for (int k = 0; k < r.length; k++) {
                String pad = " ".repeat(w[k] - r[k].length());
                line.append(k < 2 ? r[k] + pad : pad + r[k]).append(k + 1 < r.length ? "  " : "");
            }
            b.append(line.toString().stripTrailing()).append('\n');
        }
        return b.toString();
    }
}
