package dev.sandbox4j.policy;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.regex.Pattern;

/**
 * An IPv4 or IPv6 network in CIDR notation, such as {@code 10.0.0.0/8} or {@code 2001:db8::/32}.
 *
 * <p>Parsing never touches DNS. A bare address is read as a single host ({@code /32} or {@code /128}).
 * An address with bits set beyond the prefix ({@code 10.0.0.1/8}) is rejected rather than silently
 * widened or narrowed, because either reading could weaken the policy the caller meant.
 *
 * @since 0.1.0
 */
public final class Cidr {
    private static final Pattern IPV4 = Pattern.compile("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})");
    private static final Pattern IPV6_CHARS = Pattern.compile("[0-9a-fA-F:.]+");

    private final byte[] address;
    private final int prefix;

    private Cidr(byte[] address, int prefix) {
        this.address = address;
        this.prefix = prefix;
    }

    /**
     * Parses CIDR notation; a bare address is a single host. Never touches DNS.
     *
     * @param text such as {@code 10.0.0.0/8}, {@code 2001:db8::/32} or {@code 192.0.2.1}; surrounding blanks
     *     are ignored
     * @return the network
     * @throws InvalidPolicyException naming what is wrong: the address, the prefix range, or host bits
     */
    public static Cidr parse(String text) {
        if (text == null || text.isBlank()) {
            throw new InvalidPolicyException("CIDR must not be empty");
        }
        String s = text.trim();
        int slash = s.indexOf('/');
        String addr = slash < 0 ? s : s.substring(0, slash);
        byte[] bytes = parseAddress(addr, text);
        int max = bytes.length * 8;
        int prefix = max;
        if (slash >= 0) {
            String p = s.substring(slash + 1);
            if (!p.matches("\\d{1,9}")) {
                throw new InvalidPolicyException("CIDR '" + text + "': prefix '" + p + "' is not a number");
            }
            prefix = Integer.parseInt(p);
            if (prefix > max) {
                throw new InvalidPolicyException(
                        "CIDR '" + text + "': prefix /" + prefix + " is out of range 0.." + max);
            }
        }
        for (int bit = prefix; bit < max; bit++) {
            if ((bytes[bit / 8] & (0x80 >>> (bit % 8))) != 0) {
                Cidr network = new Cidr(mask(bytes, prefix), prefix);
                throw new InvalidPolicyException("CIDR '" + text + "' has host bits set beyond /" + prefix
                        + " (did you mean " + network + "?)");
            }
        }
        return new Cidr(bytes, prefix);
    }

    private static byte[] parseAddress(String addr, String original) {
        var m = IPV4.matcher(addr);
        if (m.matches()) {
            byte[] b = new byte[4];
            for (int i = 0; i < 4; i++) {
                int v = Integer.parseInt(m.group(i + 1));
                if (v > 255) {
                    throw new InvalidPolicyException("CIDR '" + original + "': '" + addr + "' is not an IPv4 address");
                }
                b[i] = (byte) v;
            }
            return b;
        }
        if (addr.indexOf(':') >= 0 && IPV6_CHARS.matcher(addr).matches() && addr.charAt(0) != '.') {
            try {
                // InetAddress parses a literal starting with a hex digit or ':' and containing ':' without
                // any name lookup; one starting with '.' would go to the resolver, hence the check above.
                byte[] b = InetAddress.getByName(addr).getAddress();
                if (b.length == 16) {
                    return b;
                }
                // an IPv4-mapped literal such as ::ffff:1.2.3.4 comes back as 4 bytes: refuse the ambiguity
            } catch (UnknownHostException e) {
                // fall through to the error below
            }
        }
        throw new InvalidPolicyException("CIDR '" + original + "': '" + addr + "' is not an IPv4 or IPv6 address");
    }

    private static byte[] mask(byte[] bytes, int prefix) {
        byte[] out = bytes.clone();
        for (int bit = prefix; bit < out.length * 8; bit++) {
            out[bit / 8] &= (byte) ~(0x80 >>> (bit % 8));
        }
        return out;
    }

    /** {@return the IP version: 4 or 6} */
    public int version() {
        return address.length == 4 ? 4 : 6;
    }

    /** {@return whether this is an IPv4 network (otherwise IPv6)} */
    public boolean isIpv4() {
        return address.length == 4;
    }

    /** {@return the prefix length in bits: 0 to 32 for IPv4, 0 to 128 for IPv6} */
    public int prefixLength() {
        return prefix;
    }

    /** {@return the network address bytes (a copy): 4 for IPv4, 16 for IPv6} */
    public byte[] networkAddress() {
        return address.clone();
    }

    /**
     * {@return the network address without the prefix, e.g. {@code 10.0.0.0} or {@code 2001:db8::} (RFC 5952
     * form)}
     */
    public String address() {
        if (address.length == 4) {
            return (address[0] & 0xff) + "." + (address[1] & 0xff) + "." + (address[2] & 0xff) + "." + (address[3] & 0xff);
        }
        int[] groups = new int[8];
        for (int i = 0; i < 8; i++) {
            groups[i] = ((address[2 * i] & 0xff) << 8) | (address[2 * i + 1] & 0xff);
        }
        // RFC 5952: compress the longest run (first if tied) of two or more zero groups.
        int bestStart = -1;
        int bestLen = 1;
        for (int i = 0; i < 8; ) {
            if (groups[i] != 0) {
                i++;
                continue;
            }
            int j = i;
            while (j < 8 && groups[j] == 0) {
                j++;
            }
            if (j - i > bestLen) {
                bestStart = i;
                bestLen = j - i;
            }
            i = j;
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                sb.append("::");
                i += bestLen - 1;
                continue;
            }
            if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') {
                sb.append(':');
            }
            sb.append(Integer.toHexString(groups[i]));
        }
        return sb.toString();
    }

    /**
     * {@return true when every address of {@code other} is inside this network; false across IP versions}
     *
     * @param other the network tested
     */
    public boolean contains(Cidr other) {
        if (other.address.length != address.length || other.prefix < prefix) {
            return false;
        }
        return Arrays.equals(mask(other.address, prefix), address);
    }

    /**
     * {@return true when the two networks share at least one address; false across IP versions}
     *
     * @param other the network tested
     */
    public boolean overlaps(Cidr other) {
        return contains(other) || other.contains(this);
    }

    /** {@return true for a single address ({@code /32} or {@code /128})} */
    public boolean isSingleHost() {
        return prefix == address.length * 8;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Cidr c && c.prefix == prefix && Arrays.equals(c.address, address);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(address) * 31 + prefix;
    }

    /** Canonical notation, always with the prefix: {@code 10.0.0.0/8}. */
    @Override
    public String toString() {
        return address() + "/" + prefix;
    }
}
