/*
 * Copyright 2026 The DJL Distributed Authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
 * in compliance with the License. You may obtain a copy of the License at
 *
 * http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software distributed under the License
 * is distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express
 * or implied. See the License for the specific language governing permissions and limitations under
 * the License.
 */
package ai.djl.distributed.store.tcp;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A certificate authority and a certificate it signs, made for a test by the JDK's own {@code
 * keytool} (no key or certificate is committed) and written as the PEM files {@link StoreTls}
 * reads: {@code ca.pem}, {@code chain.pem} (the leaf, then the authority) and {@code key.pem}
 * (PKCS#8). EC P-256 keys, valid for two days.
 */
public final class TlsFiles {

    private static final String PASS = "changeit";

    /** The authority's certificate. */
    public final Path authority;

    /** The certificate chain, leaf first. */
    public final Path chain;

    /** The leaf's private key. */
    public final Path key;

    private TlsFiles(Path dir) {
        this.authority = dir.resolve("ca.pem");
        this.chain = dir.resolve("chain.pem");
        this.key = dir.resolve("key.pem");
    }

    /**
     * Makes an authority named {@code name} and one certificate it signs, in {@code dir}.
     *
     * @param dir an empty directory
     * @param name the authority's common name
     * @return the files
     * @throws IOException if keytool fails or a file cannot be written
     * @throws InterruptedException if interrupted while keytool runs
     */
    public static TlsFiles make(Path dir, String name) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        TlsFiles files = new TlsFiles(dir);
        Path ca = dir.resolve("ca.p12");
        Path leaf = dir.resolve("leaf.p12");
        Path csr = dir.resolve("leaf.csr");
        Path leafPem = dir.resolve("leaf.pem");
        keytool(
                dir,
                "-genkeypair",
                "-alias",
                "ca",
                "-keyalg",
                "EC",
                "-groupname",
                "secp256r1",
                "-dname",
                "CN=" + name,
                "-ext",
                "bc:c",
                "-validity",
                "2",
                "-keystore",
                ca);
        keytool(
                dir,
                "-exportcert",
                "-alias",
                "ca",
                "-rfc",
                "-keystore",
                ca,
                "-file",
                files.authority);
        keytool(
                dir,
                "-genkeypair",
                "-alias",
                "leaf",
                "-keyalg",
                "EC",
                "-groupname",
                "secp256r1",
                "-dname",
                "CN=store",
                "-validity",
                "2",
                "-keystore",
                leaf);
        keytool(dir, "-certreq", "-alias", "leaf", "-keystore", leaf, "-file", csr);
        keytool(
                dir,
                "-gencert",
                "-alias",
                "ca",
                "-keystore",
                ca,
                "-infile",
                csr,
                "-rfc",
                "-validity",
                "2",
                "-ext",
                "san=ip:127.0.0.1",
                "-ext",
                "eku=serverAuth,clientAuth",
                "-outfile",
                leafPem);
        Files.writeString(
                files.chain, Files.readString(leafPem) + Files.readString(files.authority));
        Files.writeString(files.key, pkcs8(leaf));
        return files;
    }

    /**
     * Returns settings that hold all three files, as every rank of a job would: a server with them
     * requires client certificates (mutual TLS).
     *
     * @return the settings, on the default TLS implementation
     */
    public StoreTls settings() {
        return StoreTls.builder()
                .optCertificate(chain, key)
                .optTrustedCertificates(authority)
                .build();
    }

    private static String pkcs8(Path keystore) throws IOException {
        try (InputStream in = Files.newInputStream(keystore)) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, PASS.toCharArray());
            PrivateKey key = (PrivateKey) ks.getKey("leaf", PASS.toCharArray());
            String body =
                    Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                            .encodeToString(key.getEncoded());
            return "-----BEGIN PRIVATE KEY-----\n" + body + "\n-----END PRIVATE KEY-----\n";
        } catch (java.security.GeneralSecurityException e) {
            throw new IOException("cannot read the key of " + keystore, e);
        }
    }

    private static void keytool(Path dir, Object... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        for (Object a : args) {
            command.add(a.toString());
        }
        command.addAll(List.of("-storetype", "PKCS12", "-storepass", PASS, "-noprompt"));
        Process p =
                new ProcessBuilder(command)
                        .directory(dir.toFile())
                        .redirectErrorStream(true)
                        .redirectOutput(dir.resolve("keytool.log").toFile())
                        .start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException("keytool did not finish in 60 s: " + command);
        }
        if (p.exitValue() != 0) {
            throw new IOException(
                    "keytool failed: "
                            + command
                            + "\n"
                            + Files.readString(dir.resolve("keytool.log")));
        }
    }
}
