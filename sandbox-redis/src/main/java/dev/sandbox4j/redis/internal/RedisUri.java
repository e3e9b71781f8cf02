package dev.sandbox4j.redis.internal;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * A {@code redis://} or {@code rediss://} URI, parsed by hand: {@link java.net.URI} rejects a password
 * holding {@code #} or {@code @} and puts the whole input, password included, in its message. The user
 * info ends at the last {@code @} (a host has none), so a password may hold {@code @ # : /}; it is
 * percent-decoded, so {@code %40} works too and a literal {@code %} is written {@code %25}. No message
 * of this class ever contains the user info.
 */
public final class RedisUri {
    private final boolean tls;
    private final String host;
    private final int port;
    private final String user;
    private final String password;
    private final int database;

    private RedisUri(boolean tls, String host, int port, String user, String password, int database) {
        this.tls = tls;
        this.host = host;
        this.port = port;
        this.user = user;
        this.password = password;
        this.database = database;
    }

    public static RedisUri parse(String uri) {
        int sep = uri.indexOf("://");
        String scheme = sep < 0 ? "" : uri.substring(0, sep);
        if (!scheme.equals("redis") && !scheme.equals("rediss")) {
            throw new IllegalArgumentException("not a redis:// or rediss:// URI");
        }
        String rest = uri.substring(sep + 3);
        int at = rest.lastIndexOf('@');
        String userInfo = at < 0 ? null : rest.substring(0, at);
        String hostPart = at < 0 ? rest : rest.substring(at + 1);
        int slash = hostPart.indexOf('/');
        String authority = slash < 0 ? hostPart : hostPart.substring(0, slash);
        String path = slash < 0 ? "" : hostPart.substring(slash + 1);
        String host;
        String portText = null;
        if (authority.startsWith("[")) {
            int close = authority.indexOf(']');
            if (close < 0) {
                throw new IllegalArgumentException("the URI's IPv6 host has no closing ']'");
            }
            host = authority.substring(1, close);
            if (authority.length() > close + 1) {
                if (authority.charAt(close + 1) != ':') {
                    throw new IllegalArgumentException("the URI has text after its IPv6 host");
                }
                portText = authority.substring(close + 2);
            }
        } else {
            int colon = authority.lastIndexOf(':');
            host = colon < 0 ? authority : authority.substring(0, colon);
            portText = colon < 0 ? null : authority.substring(colon + 1);
        }
        if (host.isEmpty() || !host.matches("[A-Za-z0-9._:%-]+")) {
            throw new IllegalArgumentException("the URI has no valid host (host names are letters, digits, '.', '-')");
        }
        int port = 6379;
        if (portText != null) {
            if (!portText.matches("[0-9]{1,5}") || Integer.parseInt(portText) < 1 || Integer.parseInt(portText) > 65535) {
                throw new IllegalArgumentException("the URI's port is not a number from 1 to 65535");
            }
            port = Integer.parseInt(portText);
        }
        int database = 0;
        if (!path.isEmpty()) {
            if (!path.matches("[0-9]{1,5}")) {
                throw new IllegalArgumentException("the URI's path is not a database number");
            }
            database = Integer.parseInt(path);
        }
        String user = null;
        String password = null;
        if (userInfo != null) {
            int colon = userInfo.indexOf(':');
            user = colon < 0 ? null : decode(userInfo.substring(0, colon));
            password = decode(colon < 0 ? userInfo : userInfo.substring(colon + 1));
            if (user != null && user.isEmpty()) {
                user = null;
            }
        }
        return new RedisUri(scheme.equals("rediss"), host, port, user, password, database);
    }

    private static String decode(String s) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] raw = s.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < raw.length; i++) {
            if (raw[i] == '%') {
                int hi = i + 2 < raw.length ? Character.digit(raw[i + 1], 16) : -1;
                int lo = i + 2 < raw.length ? Character.digit(raw[i + 2], 16) : -1;
                if (hi < 0 || lo < 0) {
                    throw new IllegalArgumentException("the URI's user info has a '%' that is not followed by two hex digits"
                            + " (write a literal '%' as %25)");
                }
                out.write(hi * 16 + lo);
                i += 2;
            } else {
                out.write(raw[i]);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    public boolean tls() {
        return tls;
    }

    public String host() {
        return host;
    }

    public int port() {
        return port;
    }

    /** Null when the URI names none. */
    public String user() {
        return user;
    }

    /** Null when the URI has no user info. */
    public String password() {
        return password;
    }

    public int database() {
        return database;
    }

    /** Scheme, host, port and database: what messages may show. Never the user info. */
    public String safe() {
        String h = host.indexOf(':') >= 0 ? "[" + host + "]" : host;
        return (tls ? "rediss" : "redis") + "://" + h + ":" + port + (database == 0 ? "" : "/" + database);
    }

    @Override
    public String toString() {
        return safe();
    }
}
