package dev.sandbox4j.micrometer;

import dev.sandbox4j.api.LifecycleListener;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.util.Arrays;

/**
 * What the observations add to one run (create, exec, teardown) on an in-memory driver, so that
 * only the lifecycle and the listener are measured. Not a test: run it by hand (see the closing
 * note of issue 22 for the command) and read the figures, which depend on the machine.
 */
public final class ObservationOverheadMain {
    private ObservationOverheadMain() {
    }

    public static void main(String[] args) {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        ObservationRegistry observed = ObservationRegistry.create();
        observed.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
        LifecycleListener[] listeners = {
            LifecycleListener.NONE,
            MicrometerLifecycleListener.builder(ObservationRegistry.NOOP).build(),
            MicrometerLifecycleListener.builder(observed).meterRegistry(meters).build(),
        };
        String[] names = {"no listener", "micrometer, NOOP registry", "micrometer, meter handler"};
        for (int i = 0; i < listeners.length; i++) {
            double[] rounds = new double[7];
            try (ManagedSandboxRunner<MicrometerLifecycleListenerTest.RefusingDriver.Handle> runner =
                    ManagedSandboxRunner.builder(new MicrometerLifecycleListenerTest.RefusingDriver(false))
                            .lifecycleListener(listeners[i]).build()) {
                for (int r = 0; r < rounds.length; r++) {
                    long t0 = System.nanoTime();
                    for (int n = 0; n < runs; n++) {
                        runner.run(RunRequest.python("print(1)"));
                    }
                    rounds[r] = (System.nanoTime() - t0) / 1000.0 / runs;
                }
            }
            Arrays.sort(rounds);
            System.out.printf("%-28s median %.2f us per run (min %.2f, max %.2f; 7 rounds of %d runs)%n",
                    names[i], rounds[3], rounds[0], rounds[6], runs);
        }
    }
}
