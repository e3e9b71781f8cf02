package dev.sandbox4j.benchmarks.adapters;

import java.util.Arrays;
import java.util.List;

/** Order statistics over samples (nearest rank, as a p99 of n samples is the ceil(0.99 n)-th smallest). */
final class Stats {
    private Stats() {
    }

    /** The q-quantile (0 &lt; q &lt;= 1) by nearest rank; NaN for no samples. */
    static double quantile(List<? extends Number> samples, double q) {
        if (q <= 0 || q > 1) {
            throw new IllegalArgumentException("quantile must be in (0, 1], was " + q);
        }
        if (samples.isEmpty()) {
            return Double.NaN;
        }
        double[] s = samples.stream().mapToDouble(Number::doubleValue).toArray();
        Arrays.sort(s);
        int rank = (int) Math.ceil(q * s.length);
        return s[Math.max(rank, 1) - 1];
    }

    /** The median: the mean of the two middle samples when n is even; NaN for no samples. */
    static double median(List<? extends Number> samples) {
        if (samples.isEmpty()) {
            return Double.NaN;
        }
        double[] s = samples.stream().mapToDouble(Number::doubleValue).toArray();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }
}
