package dev.sandbox4j.egress;

/**
 * Why the proxy refused a request. The {@linkplain #code() code} appears in the refusal's
 * {@code X-Sandbox4j-Egress-Refusal} header; the reason line in the status line and body says the
 * same in words.
 *
 * @since 0.1.0
 */
public enum RefusalReason {
    /** The request was not one the proxy serves: malformed, origin-form, {@code https://} without CONNECT, an unsupported method or version. */
    BAD_REQUEST("bad-request"),
    /** The host name is not allowed by the policy. */
    HOST_NOT_ALLOWED("host-not-allowed"),
    /** An IP literal outside every allowed CIDR. */
    IP_NOT_ALLOWED("ip-not-allowed"),
    /** The name resolved only to private, loopback, link-local or other non-public addresses that no allowed CIDR contains. */
    ADDRESS_NOT_ALLOWED("address-not-allowed"),
    /** The address lies in a denied CIDR (deny wins). */
    DENIED_CIDR("denied-cidr"),
    /** A host admitted by a domain rule, on a port other than the domain ports (80 and 443 by default). */
    PORT_NOT_ALLOWED("port-not-allowed"),
    /** The resolver found no address for the name. */
    UNRESOLVABLE("unresolvable"),
    /** The tunnel did not start with a TLS ClientHello, or it carried no server name. */
    SNI_MISSING("sni-missing"),
    /** The ClientHello named another server than the CONNECT host. */
    SNI_MISMATCH("sni-mismatch"),
    /** Inside a brokered tunnel, a request's Host header named another host than the tunnel's. */
    HOST_MISMATCH("host-mismatch"),
    /** Plain HTTP to a host with a header rule: the secret is only sent over TLS. */
    BROKERED_NEEDS_TLS("brokered-needs-tls"),
    /** The proxy already holds its maximum of concurrent connections. */
    CONNECTION_LIMIT("connection-limit"),
    /** The proxy has relayed its maximum of bytes. */
    BYTE_LIMIT("byte-limit");

    private final String code;

    RefusalReason(String code) {
        this.code = code;
    }

    /** {@return the reason as a short token, e.g. {@code host-not-allowed}} */
    public String code() {
        return code;
    }
}
