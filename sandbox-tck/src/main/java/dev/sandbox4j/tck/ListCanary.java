package dev.sandbox4j.tck;

import dev.sandbox4j.policy.EgressPolicy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.security.SecureRandom;
import java.util.List;
import java.util.Map;

/**
 * The canary of the domain-list case ({@link EgressCases}), one per JVM: a {@link CanaryListener} on a
 * random address of the loopback network ({@code 127.x.y.z}, so two test JVMs on one machine do not
 * meet) and an ephemeral port, known before the runner under test is built, because a runner that
 * enforces lists with a proxy of its own must be set up with it:
 * <ul>
 *   <li>{@link #resolution()}: its resolver answers the three names with the canary's address (and
 *       nothing else: no test name goes to DNS);</li>
 *   <li>{@link #ALLOWED} on {@link #port()} is routed to the canary by the application's own setting
 *       ({@link #routeTarget()}), which is what lets an allowed name reach a loopback address at all;</li>
 *   <li>{@link #port()} is one of its domain ports.</li>
 * </ul>
 * The case's policy is {@link #policy()}: {@link #ALLOWED} and {@link #REBIND}. The case then expects
 * {@link #ALLOWED} reached; {@link #OTHER} (not on the list), the raw address, and {@link #REBIND} (on
 * the list, but its answer is a loopback address: DNS rebinding) refused with nothing arriving. A proxy
 * that let everything through would carry all four to the canary, so each zero can fail.
 *
 * @since 0.1.0
 */
public final class ListCanary {
    /** On the list; routed to the canary by the runner's test setting. */
    public static final String ALLOWED = "allowed.test";
    /** Not on the list; resolves to the canary. */
    public static final String OTHER = "other.test";
    /** On the list; resolves to the canary's loopback address, with no route: a private answer. */
    public static final String REBIND = "rebind.test";

    private static ListCanary shared;

    private final CanaryListener listener;

    private ListCanary(CanaryListener listener) {
        this.listener = listener;
    }

    /**
     * The canary of this JVM, started at the first call; it lives as long as the JVM.
     *
     * @return the canary
     * @throws UncheckedIOException when five random loopback addresses all failed to bind
     */
    public static synchronized ListCanary shared() {
        if (shared == null) {
            SecureRandom r = new SecureRandom();
            IOException last = null;
            for (int attempt = 0; attempt < 5 && shared == null; attempt++) {
                byte[] a = {127, (byte) (1 + r.nextInt(254)), (byte) (1 + r.nextInt(254)), (byte) (1 + r.nextInt(254))};
                try {
                    shared = new ListCanary(CanaryListener.start(InetAddress.getByAddress(a)));
                } catch (IOException e) {
                    last = e;
                }
            }
            if (shared == null) {
                throw new UncheckedIOException("could not start the list canary on a loopback address", last);
            }
        }
        return shared;
    }

    /**
     * The listener, to count what arrived.
     *
     * @return the canary's listener
     */
    public CanaryListener listener() {
        return listener;
    }

    /**
     * The canary's address, on the loopback network.
     *
     * @return the address, without a host name
     */
    public InetAddress address() {
        try {
            return InetAddress.getByAddress(listener.bindAddress().getAddress());
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The canary's TCP port: a domain port of the runner's proxy in the test.
     *
     * @return the port
     */
    public int port() {
        return listener.port();
    }

    /**
     * Where the runner routes {@link #ALLOWED} on {@link #port()}: the canary.
     *
     * @return the canary's address and port
     */
    public InetSocketAddress routeTarget() {
        return new InetSocketAddress(address(), port());
    }

    /**
     * The names the runner's test resolver answers, each with the canary's address.
     *
     * @return {@link #ALLOWED}, {@link #OTHER} and {@link #REBIND}, each to the one address {@link #address()}
     */
    public Map<String, List<InetAddress>> resolution() {
        List<InetAddress> a = List.of(address());
        return Map.of(ALLOWED, a, OTHER, a, REBIND, a);
    }

    /**
     * The case's policy: {@link #ALLOWED} and {@link #REBIND}, deny by default.
     *
     * @return the policy
     */
    public static EgressPolicy policy() {
        return EgressPolicy.allowOnly(ALLOWED, REBIND);
    }
}
