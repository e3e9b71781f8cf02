package dev.sandbox4j.egress.internal;

import java.io.ByteArrayInputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * A certificate authority of one proxy: an EC P-256 key pair made with the JDK, a self-signed CA
 * certificate and per-host leaf certificates (SAN dNSName = the host) signed SHA256withECDSA, encoded
 * by {@link Der}. The private keys stay in this object: nothing writes them anywhere. The extensions
 * are the ones strict verifiers (OpenSSL 3 with {@code X509_V_FLAG_X509_STRICT}, Python 3.13's
 * default) require: basicConstraints and keyUsage critical on the CA, subject and authority key
 * identifiers, extendedKeyUsage serverAuth on leaves.
 */
public final class CertificateAuthority {
    private static final String EC_SHA256 = "1.2.840.10045.4.3.2";
    private static final SecureRandom RANDOM = new SecureRandom();

    private final KeyPair caKeys;
    private final KeyPair leafKeys;
    private final X509Certificate caCert;
    private final byte[] caKeyId;
    private final String name;
    private final Duration validity;
    private final Map<String, SSLContext> contexts = new ConcurrentHashMap<>();

    private CertificateAuthority(String name, Duration validity) throws GeneralSecurityException {
        this.name = name;
        this.validity = validity;
        this.caKeys = newKeyPair();
        this.leafKeys = newKeyPair();
        this.caKeyId = keyId(caKeys.getPublic());
        ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC);
        byte[] subject = name(name);
        byte[] extensions = Der.seq(
                extension("2.5.29.19", true, Der.seq(Der.bool(true), Der.integer(0))), // basicConstraints CA, pathLen 0
                extension("2.5.29.15", true, Der.bits(0x06, 1)), // keyUsage keyCertSign, cRLSign
                extension("2.5.29.14", false, Der.octets(caKeyId))); // subjectKeyIdentifier
        this.caCert = sign(subject, subject, now.minusHours(1), now.plus(validity), caKeys.getPublic(), extensions, caKeys.getPrivate());
    }

    /** A new CA named {@code commonName}, its certificates valid from an hour ago for {@code validity}. */
    public static CertificateAuthority create(String commonName, Duration validity) {
        try {
            return new CertificateAuthority(commonName, validity);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK could not make an EC P-256 CA", e);
        }
    }

    public X509Certificate certificate() {
        return caCert;
    }

    /** The CA certificate in PEM. */
    public String certificatePem() {
        return pem(caCert);
    }

    /** A leaf certificate for {@code hosts} (the first is the subject's common name), signed by this CA. */
    public X509Certificate issue(String... hosts) {
        try {
            ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC);
            byte[][] names = new byte[hosts.length][];
            for (int i = 0; i < hosts.length; i++) {
                names[i] = Der.implicit(2, hosts[i].getBytes(StandardCharsets.US_ASCII));
            }
            byte[] sans = Der.concat(names);
            byte[] extensions = Der.seq(
                    extension("2.5.29.19", true, Der.seq()), // basicConstraints: not a CA
                    extension("2.5.29.15", true, Der.bits(0x80, 7)), // keyUsage digitalSignature
                    extension("2.5.29.37", false, Der.seq(Der.oid("1.3.6.1.5.5.7.3.1"))), // extKeyUsage serverAuth
                    extension("2.5.29.17", false, Der.seq(sans)), // subjectAltName: dNSName per host
                    extension("2.5.29.14", false, Der.octets(keyId(leafKeys.getPublic()))),
                    extension("2.5.29.35", false, Der.seq(Der.implicit(0, caKeyId)))); // authorityKeyIdentifier
            return sign(name(hosts[0]), name(name), now.minusHours(1), now.plus(validity), leafKeys.getPublic(), extensions,
                    caKeys.getPrivate());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("could not issue a certificate", e);
        }
    }

    /** A server-side TLS context presenting a leaf for {@code host} (made once per host, then kept). */
    public SSLContext serverContext(String host) {
        if (contexts.size() > 1024) {
            contexts.clear(); // a wildcard rule can name any number of hosts: the cache stays bounded
        }
        return contexts.computeIfAbsent(host, h -> {
            try {
                return serverContext(leafKeys.getPrivate(), List.of(issue(h), caCert));
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("could not make a TLS context", e);
            }
        });
    }

    /** A server-side TLS context presenting {@code chain} (leaf first) with {@code key}. */
    public static SSLContext serverContext(PrivateKey key, List<X509Certificate> chain) throws GeneralSecurityException {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try {
            ks.load(null, null);
        } catch (java.io.IOException e) {
            throw new GeneralSecurityException(e);
        }
        char[] pass = new char[0];
        ks.setKeyEntry("leaf", key, pass, chain.toArray(new Certificate[0]));
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, pass);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), null, null);
        return ctx;
    }

    /** The leaf key shared by every host's leaf (for tests that build their own server contexts). */
    public PrivateKey leafKey() {
        return leafKeys.getPrivate();
    }

    public static String pem(X509Certificate cert) {
        try {
            String b64 = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(cert.getEncoded());
            return "-----BEGIN CERTIFICATE-----\n" + b64 + "\n-----END CERTIFICATE-----\n";
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static KeyPair newKeyPair() throws GeneralSecurityException {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
        return g.generateKeyPair();
    }

    private static X509Certificate sign(byte[] subject, byte[] issuer, ZonedDateTime notBefore, ZonedDateTime notAfter,
            PublicKey key, byte[] extensions, PrivateKey signer) throws GeneralSecurityException {
        byte[] serial = new byte[16];
        RANDOM.nextBytes(serial);
        serial[0] = (byte) ((serial[0] & 0x7f) | 0x01); // positive and exactly 16 bytes
        byte[] algorithm = Der.seq(Der.oid(EC_SHA256));
        byte[] tbs = Der.seq(
                Der.explicit(0, Der.integer(2)), // v3
                Der.integer(new BigInteger(serial)),
                algorithm,
                issuer,
                Der.seq(Der.time(notBefore), Der.time(notAfter)),
                subject,
                key.getEncoded(), // SubjectPublicKeyInfo, DER already
                Der.explicit(3, extensions));
        Signature s = Signature.getInstance("SHA256withECDSA");
        s.initSign(signer);
        s.update(tbs);
        byte[] der = Der.seq(tbs, algorithm, Der.bits(s.sign()));
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        return (X509Certificate) cf.generateCertificate(new ByteArrayInputStream(der));
    }

    private static byte[] name(String commonName) {
        return Der.seq(Der.set(Der.seq(Der.oid("2.5.4.3"), Der.utf8(commonName))));
    }

    private static byte[] extension(String oid, boolean critical, byte[] value) {
        return critical ? Der.seq(Der.oid(oid), Der.bool(true), Der.octets(value)) : Der.seq(Der.oid(oid), Der.octets(value));
    }

    /** RFC 5280 4.2.1.2 method 1: SHA-1 of the subjectPublicKey bits. */
    private static byte[] keyId(PublicKey key) throws GeneralSecurityException {
        byte[] spki = key.getEncoded();
        // For a P-256 key the BIT STRING is the last 66 bytes: tag, length 0x42, 0 unused bits, 65 key bytes.
        byte[] point = Arrays.copyOfRange(spki, spki.length - 65, spki.length);
        return MessageDigest.getInstance("SHA-1").digest(point);
    }

    @Override
    public String toString() {
        return "CertificateAuthority[" + name + "]";
    }
}
