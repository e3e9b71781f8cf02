package dev.sandbox4j.tck;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What every contract case may use: the runner under test, the subclass's hooks, and shared
 * helpers. Implemented by {@link SandboxRunnerContract}; a new topic of cases is an interface
 * extending this one, added to that class's {@code implements} list.
 *
 * @since 0.1.0
 */
public interface ContractContext {
    /**
     * The runner under test.
     *
     * @return the runner, created once for the class
     */
    SandboxRunner runner();

    /**
     * See {@link SandboxRunnerContract#liveResources()}.
     *
     * @return the leak count, or empty when the runner cannot tell
     */
    OptionalLong liveResources();

    /**
     * See {@link SandboxRunnerContract#canaryReachingPolicy()}.
     *
     * @return the control's egress, or empty for none
     */
    Optional<EgressPolicy> canaryReachingPolicy();

    /**
     * See {@link SandboxRunnerContract#lockDownCanaryPolicy()}.
     *
     * @return the lock-down cases' setup egress, or empty for none
     */
    Optional<EgressPolicy> lockDownCanaryPolicy();

    /**
     * See {@link SandboxRunnerContract#listCanary()}.
     *
     * @return the domain-list case's canary, or empty when the runner was not built for it
     */
    Optional<ListCanary> listCanary();

    /**
     * See {@link SandboxRunnerContract#canaryHost()}.
     *
     * @return the address code in the sandbox connects to
     */
    String canaryHost();

    /**
     * See {@link SandboxRunnerContract#canaryBindAddress()}.
     *
     * @return the address the canary listener binds to
     */
    InetAddress canaryBindAddress();

    /**
     * See {@link SandboxRunnerContract#dnsProbeName()}.
     *
     * @return a name this machine can resolve
     */
    String dnsProbeName();

    /**
     * See {@link SandboxRunnerContract#timeoutGrace()}.
     *
     * @return how long after its budget a timed-out run may come back
     */
    Duration timeoutGrace();

    /** Fails when the leak count is not back to its value before the test. */
    void assertLeakCountBackToBaseline();

    /** Quotes, shell substitutions, a tab, newlines and non-ASCII; no backslash and no triple quote (it sits in r'''...'''). */
    String TRICKY = "He said \"hi\" & 'bye'; echo $(id -u) `uname -a` ${HOME} $((6*7)) !! ~ * ? [a] {b,c}"
            + " | > < ; # %s %n\n\tindented\twith tabs\n\uD83D\uDE00 \u00fcn\u00efc\u00f6d\u00e9 \u4e2d\u6587 \u00a0 -c -e -- $";

    /**
     * Python that prints the SHA-256 (lowercase hex) of {@code payload}'s UTF-8 and its length in code
     * points. The payload sits in a raw triple-quoted string, so it must hold no triple quote and no
     * backslash (as {@link #TRICKY} holds none).
     *
     * @param payload the text to hash
     * @return the code
     */
    default String hashingCode(String payload) {
        return "import hashlib\ns = r'''" + payload + "'''\nprint(hashlib.sha256(s.encode('utf-8')).hexdigest(), len(s))\n";
    }

    /**
     * Sends a tagged TCP stream and three tagged datagrams to the canary, and, when the sandbox's
     * {@code HTTPS_PROXY} is set, the tagged stream once more through a {@code CONNECT} tunnel of that proxy
     * ({@link #pythonConnect}); reports what the sandbox saw.
     *
     * @param tag the first line of the stream and of each datagram: the tag the canary counts them under
     * @param canary the listener to reach, at {@link #canaryHost()}
     * @return the code, which prints on one line, space-separated, {@code TCP-SENT} or
     *         {@code TCP-BLOCKED} and the exception's type, the same with {@code PROXY-TCP-} when
     *         {@code HTTPS_PROXY} is set, and {@code UDP-SENT} or {@code UDP-BLOCKED} and the type
     */
    default String canaryCode(String tag, CanaryListener canary) {
        return "import os, socket\n"
                + "host = '" + canaryHost() + "'\n"
                + "said = []\n"
                + "try:\n"
                + "    s = socket.create_connection((host, " + canary.port() + "), timeout=5)\n"
                + "    s.sendall(b'" + tag + "\\n' + b'x' * 4096)\n"
                + "    s.close()\n"
                + "    said.append('TCP-SENT')\n"
                + "except Exception as e:\n"
                + "    said.append('TCP-BLOCKED ' + type(e).__name__)\n"
                + pythonConnect()
                + "if os.environ.get('HTTPS_PROXY'):\n"
                + "    try:\n"
                + "        s = tck_connect(host, " + canary.port() + ", 5)\n"
                + "        s.sendall(b'" + tag + "\\n' + b'x' * 4096)\n"
                + "        s.close()\n"
                + "        said.append('PROXY-TCP-SENT')\n"
                + "    except Exception as e:\n"
                + "        said.append('PROXY-TCP-BLOCKED ' + type(e).__name__)\n"
                + "try:\n"
                + "    family, kind, proto, _, addr = socket.getaddrinfo(host, " + canary.udpPort() + ", type=socket.SOCK_DGRAM)[0]\n"
                + "    u = socket.socket(family, kind, proto)\n"
                + "    for _ in range(3):\n"
                + "        u.sendto(b'" + tag + "\\n' + b'y' * 512, addr)\n"
                + "    said.append('UDP-SENT')\n"
                + "except Exception as e:\n"
                + "    said.append('UDP-BLOCKED ' + type(e).__name__)\n"
                + "print(' '.join(said))\n";
    }

    /**
     * Host environment values that must not appear in a sandbox: the TCK's marker, credentials, the JDK's home.
     *
     * @return by variable name, the values of {@value SandboxRunnerContract#HOST_SECRET_VARIABLE},
     *         {@code JAVA_HOME}, {@code MAVEN_*} and every variable whose name holds {@code SECRET},
     *         {@code TOKEN}, {@code PASSWORD}, {@code API_KEY} or {@code CREDENTIAL} (any case), each of
     *         at least 8 characters (shorter values are left out)
     */
    default Map<String, String> hostSecrets() {
        Map<String, String> s = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : System.getenv().entrySet()) {
            String k = e.getKey().toUpperCase(Locale.ROOT);
            boolean sensitive = k.equals(SandboxRunnerContract.HOST_SECRET_VARIABLE) || k.equals("JAVA_HOME") || k.startsWith("MAVEN_")
                    || k.contains("SECRET") || k.contains("TOKEN") || k.contains("PASSWORD") || k.contains("API_KEY")
                    || k.contains("CREDENTIAL");
            if (sensitive && e.getValue().length() >= 8) {
                s.put(e.getKey(), e.getValue());
            }
        }
        return s;
    }

    /**
     * Runs {@code execution} one-shot in a sandbox of {@code spec} ({@code runner().run}).
     *
     * @param spec the sandbox
     * @param execution the code and its settings
     * @return the result
     */
    default RunResult run(SandboxSpec spec, Execution execution) {
        return runner().run(RunRequest.of(spec, execution));
    }



    /**
     * Fails, quoting the result and its abbreviated output, unless {@code r} is {@code EXITED} with
     * exit code {@code code}.
     *
     * @param r the result
     * @param code the exit code expected
     */
    default void assertExited(RunResult r, int code) {
        if (r.status() != RunStatus.EXITED || r.exitCode().orElse(Integer.MIN_VALUE) != code) {
            fail("expected EXITED(" + code + "), got " + r + "\nstdout: " + abbreviate(r.stdout()) + "\nstderr: " + abbreviate(r.stderr()));
        }
    }

    /**
     * Shortens output for a failure message.
     *
     * @param s the text
     * @return {@code s}, or its first 2,000 characters and {@code ...} when it is longer
     */
    default String abbreviate(String s) {
        return s.length() <= 2_000 ? s : s.substring(0, 2_000) + "...";
    }

    /**
     * Skips the case, with an assumption naming it, unless the runner declares the language.
     *
     * @param l the language the case needs
     */
    default void requireLanguage(Language l) {
        assumeTrue(runner().capabilities().supports(l), () -> runner().name() + " does not declare language " + l);
    }

    /**
     * Skips the case, with an assumption naming it, unless the runner declares the feature.
     *
     * @param f the feature the case needs
     */
    default void requireFeature(Capabilities.Feature f) {
        assumeTrue(runner().capabilities().supports(f), () -> runner().name() + " does not declare feature " + f);
    }

    /**
     * Skips the case, with an assumption naming it, unless the runner's capabilities list the limit.
     *
     * @param l the limit the case needs enforced
     */
    default void requireLimit(Capabilities.Limit l) {
        assumeTrue(runner().capabilities().limits().contains(l), () -> runner().name() + " does not declare limit " + l);
    }

    /**
     * Skips the case, with an assumption naming it, unless the runner declares the egress capability.
     *
     * @param e the egress capability the case needs
     */
    default void requireEgress(Capabilities.Egress e) {
        assumeTrue(runner().capabilities().supports(e), () -> runner().name() + " does not declare egress " + e);
    }

    /**
     * The domain-list canary, for a case that enforces a list: skips the case, saying why, when the runner
     * does not declare {@code DEFAULT_DENY_WITH_RULES} and {@code ALLOW_DOMAINS}, or when its test did not
     * build it for the canary ({@link #listCanary()} empty: a live provider cannot reach a loopback canary).
     *
     * @return the canary
     */
    default ListCanary requireListCanary() {
        requireEgress(Capabilities.Egress.DEFAULT_DENY_WITH_RULES);
        requireEgress(Capabilities.Egress.ALLOW_DOMAINS);
        Optional<ListCanary> lc = listCanary();
        assumeTrue(lc.isPresent(), () -> runner().name() + " declares domain lists, but this test did not build it for the"
                + " list canary (SandboxRunnerContract.listCanary())");
        return lc.get();
    }

    /**
     * The control's egress; skips the case, saying why, when {@link #canaryReachingPolicy()} is empty.
     *
     * @return the policy under which code reaches the canary
     */
    default EgressPolicy requireCanaryReachingPolicy() {
        Optional<EgressPolicy> p = canaryReachingPolicy();
        assumeTrue(p.isPresent(), () -> runner().name() + " does not declare egress " + Capabilities.Egress.ALLOW_ALL
                + " and the test supplies no other canary-reaching policy");
        return p.get();
    }

    /**
     * The lock-down cases' setup egress; skips the case, saying why, when {@link #lockDownCanaryPolicy()}
     * is empty.
     *
     * @return the setup egress under which a setup command reaches the canary
     */
    default EgressPolicy requireLockDownCanaryPolicy() {
        Optional<EgressPolicy> p = lockDownCanaryPolicy();
        assumeTrue(p.isPresent(), () -> runner().name() + " does not declare egress " + Capabilities.Egress.ALLOW_ALL
                + " and the test supplies no other canary-reaching setup egress to lock down from");
        return p.get();
    }

    /**
     * Bash that opens file descriptor 3 to {@code host:port}: straight, or, when the sandbox's
     * {@code HTTPS_PROXY} is set (a setup egress that goes through the runner's proxy), as a {@code CONNECT}
     * tunnel through that proxy, the bytes written afterwards going to {@code host:port} unchanged. Fails
     * (non-zero) when the proxy refuses the tunnel.
     *
     * @param host the address to reach
     * @param port its TCP port
     * @return the Bash, to be followed by commands that write to {@code >&3}
     */
    static String bashOpenFd3(String host, int port) {
        String target = host + ":" + port;
        return "if [ -n \"${HTTPS_PROXY:-}\" ]; then hp=${HTTPS_PROXY#*://}; hp=${hp%%/*};"
                + " exec 3<>/dev/tcp/${hp%:*}/${hp##*:} || exit 1;"
                + " printf 'CONNECT " + target + " HTTP/1.1\\r\\nHost: " + target + "\\r\\n\\r\\n' >&3;"
                + " IFS= read -r line <&3 || exit 1; case $line in 'HTTP/1.'?' 200'*) ;; *) exit 1;; esac;"
                + " while IFS= read -r line <&3; do [ \"${line%$'\\r'}\" = \"\" ] && break; done;"
                + " else exec 3<>/dev/tcp/" + host + "/" + port + " || exit 1; fi";
    }

    /**
     * Python defining {@code tck_connect(host, port, timeout)}: a connected socket to {@code host:port},
     * straight or through a {@code CONNECT} tunnel of the sandbox's {@code HTTPS_PROXY} when it is set
     * ({@link #bashOpenFd3}); raises {@code OSError} when the proxy refuses or closes.
     *
     * @return the definition; the code around it must import {@code os} and {@code socket}
     */
    static String pythonConnect() {
        return "def tck_connect(host, port, timeout):\n"
                + "    p = os.environ.get('HTTPS_PROXY')\n"
                + "    if not p:\n"
                + "        return socket.create_connection((host, port), timeout=timeout)\n"
                + "    hp = p.split('://', 1)[-1].split('/', 1)[0]\n"
                + "    s = socket.create_connection((hp.rsplit(':', 1)[0], int(hp.rsplit(':', 1)[1])), timeout=timeout)\n"
                + "    t = '%s:%d' % (host, port)\n"
                + "    s.sendall(('CONNECT ' + t + ' HTTP/1.1\\r\\nHost: ' + t + '\\r\\n\\r\\n').encode())\n"
                + "    buf = b''\n"
                + "    while b'\\r\\n\\r\\n' not in buf:\n"
                + "        d = s.recv(1024)\n"
                + "        if not d:\n"
                + "            s.close()\n"
                + "            raise OSError('the proxy closed the connection')\n"
                + "        buf += d\n"
                + "    if buf.split(b' ', 2)[1:2] != [b'200']:\n"
                + "        s.close()\n"
                + "        raise OSError('the proxy refused the tunnel')\n"
                + "    return s\n";
    }

    /**
     * The SHA-256 of a text's UTF-8.
     *
     * @param s the text
     * @return the digest in lowercase hex
     * @throws NoSuchAlgorithmException when SHA-256 is not available (every Java platform has it)
     */
    default String sha256(String s) throws NoSuchAlgorithmException {
        return sha256(s.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The SHA-256 of bytes.
     *
     * @param b the bytes
     * @return the digest in lowercase hex
     * @throws NoSuchAlgorithmException when SHA-256 is not available (every Java platform has it)
     */
    default String sha256(byte[] b) throws NoSuchAlgorithmException {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }
}
