package dev.sandbox4j.benchmarks.adapters;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The statistics and parsing behind the adapter benchmark's table (the benchmark itself is not a test). */
class StatsTest {
    @Test
    void medianOfOddAndEvenCounts() {
        assertEquals(3.0, Stats.median(List.of(5, 1, 3)));
        assertEquals(2.5, Stats.median(List.of(4, 1, 3, 2)));
        assertTrue(Double.isNaN(Stats.median(List.of())));
    }

    @Test
    void p99IsTheNearestRank() {
        List<Long> s = new ArrayList<>();
        for (long i = 1; i <= 200; i++) {
            s.add(i);
        }
        Collections.shuffle(s);
        assertEquals(198.0, Stats.quantile(s, 0.99)); // ceil(0.99 * 200) = 198th smallest
        assertEquals(200.0, Stats.quantile(s, 1.0));
        assertEquals(1.0, Stats.quantile(s, 0.001));
        assertEquals(7.0, Stats.quantile(List.of(7), 0.99));
        assertThrows(IllegalArgumentException.class, () -> Stats.quantile(s, 0));
    }

    @Test
    void cpuTicksAreUtimePlusStimeCountedFromTheLastParenthesis() {
        // a command name with spaces and a ')' inside, as a process may name itself
        String stat = "4242 (node ) x (y) S 1 4242 4242 0 -1 4194560 2619 0 0 0 137 42 0 0 20 0 11 0 5000 0 0";
        assertEquals(179, ProcStat.parseCpuTicks(stat));
        assertThrows(IllegalArgumentException.class, () -> ProcStat.parseCpuTicks("no name here"));
        assertEquals(10.0, ProcStat.ticksToMillis(1));
    }

    @Test
    void ownStatParses() throws Exception {
        long ticks = ProcStat.cpuTicks(ProcessHandle.current().pid());
        assertTrue(ticks >= 0, "ticks " + ticks);
        // this JVM has run code on several threads: their schedstat time is far above zero
        assertTrue(ProcStat.liveThreadsCpuNanos(ProcessHandle.current().pid()) > 1_000_000);
    }

    @Test
    void schedstatGivesTheRunTimeInNanoseconds() {
        assertEquals(581270960L, ProcStat.parseSchedstatNanos("581270960 941683607 216\n"));
        assertThrows(IllegalArgumentException.class, () -> ProcStat.parseSchedstatNanos("12"));
    }

    @Test
    void tallySubtractsIdleCpuAndCountsRequestsPerCycle() {
        Tally t = new Tally();
        // 2 s of wall time, 100 ticks (1 s of CPU), 40 cycles, 120 requests
        t.add(new ClientProcess.Batch(2_000_000_000L, List.of(1000L, 3000L), 0, null, 100), 40, 120);
        assertEquals(25.0, t.cpuMillisPerCycle(0), 1e-9);
        assertEquals(22.5, t.cpuMillisPerCycle(5), 1e-9); // 5 ticks/s idle over 2 s: 90 ticks, 900 ms over 40
        assertEquals(3.0, t.requestsPerCycle());
        assertEquals(20.0, t.cyclesPerSecond(), 1e-9);
        assertEquals(2.0, t.medianMillis());
        t.add(new ClientProcess.Batch(1, List.of(), 0, null, 0), 1, -1);
        assertTrue(Double.isNaN(t.requestsPerCycle()), "an unknown count makes the total unknown");
    }

    @Test
    void requestKindsAreCountedPerCycleFromBothCounterShapes() throws Exception {
        var json = new com.fasterxml.jackson.databind.ObjectMapper();
        Map<String, Long> http0 = Emulator.counts(json.readTree("{\"total\":10,\"CREATE\":2,\"EXEC\":4,\"TEARDOWN\":4}"));
        Map<String, Long> http1 = Emulator.counts(json.readTree("{\"total\":16,\"CREATE\":4,\"EXEC\":6,\"TEARDOWN\":6}"));
        Tally t = new Tally();
        t.add(new ClientProcess.Batch(1, List.of(1L, 1L), 0, null, 0), 2, http0, http1);
        assertEquals(3.0, t.requestsPerCycle());
        assertEquals("CREATE 1.00, EXEC 1.00, TEARDOWN 1.00", t.kindsPerCycle());
        // Modal's shape: per-method counts under "calls"
        Map<String, Long> modal = Emulator.counts(json.readTree("{\"total\":3,\"calls\":{\"SandboxCreate\":1,\"SandboxTerminate\":2}}"));
        assertEquals(Map.of("total", 3L, "SandboxCreate", 1L, "SandboxTerminate", 2L), modal);
        assertThrows(IllegalArgumentException.class, () -> Emulator.counts(json.readTree("{\"calls\":{}}")));
        Tally unknown = new Tally();
        unknown.add(new ClientProcess.Batch(1, List.of(), 0, null, 0), 1, null, http1);
        assertTrue(Double.isNaN(unknown.requestsPerCycle()));
    }

    @Test
    void roundsAlternateTheOrder() {
        Map<String, Integer> m = new java.util.LinkedHashMap<>();
        m.put("SDK", 1);
        m.put("Java", 2);
        assertEquals(List.of("SDK", "Java"), List.copyOf(AdapterBench.ordered(m, 0).keySet()));
        assertEquals(List.of("Java", "SDK"), List.copyOf(AdapterBench.ordered(m, 1).keySet()));
    }

    @Test
    void numbersKeepThreeSignificantDigitsOrSo() {
        assertEquals("0.47", Table.number(0.4712));
        assertEquals("12.3", Table.number(12.34));
        assertEquals("1234", Table.number(1234.4));
        assertEquals("?", Table.number(Double.NaN));
    }
}
