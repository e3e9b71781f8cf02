package dev.sandbox4j.egress;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Resolves a host name for the proxy. The proxy checks every address it gets against the policy and
 * connects to exactly the address it checked, so a resolver that answers differently from one call to
 * the next (DNS rebinding) gains nothing.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface EgressResolver {
    /**
     * The addresses of {@code host} (lower case, no trailing dot, never an IP literal).
     *
     * @param host the name to resolve
     * @return the addresses, at least one
     * @throws UnknownHostException when the name has no address
     */
    List<InetAddress> resolve(String host) throws UnknownHostException;

    /** {@return the system's resolver ({@link InetAddress#getAllByName})} */
    static EgressResolver system() {
        return host -> Arrays.asList(InetAddress.getAllByName(host));
    }

    /**
     * A fixed table, for tests and emulators: a name in {@code table} resolves to its addresses, every
     * other name is unknown (never passed on to DNS).
     *
     * @param table names (lower case, no trailing dot) to their addresses; copied
     * @return the resolver
     */
    static EgressResolver fixed(Map<String, List<InetAddress>> table) {
        Map<String, List<InetAddress>> copy = Map.copyOf(table);
        return host -> {
            List<InetAddress> a = copy.get(host);
            if (a == null || a.isEmpty()) {
                throw new UnknownHostException(host);
            }
            return a;
        };
    }
}
