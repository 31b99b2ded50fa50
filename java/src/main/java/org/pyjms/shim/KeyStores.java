package org.pyjms.shim;

import java.io.FileInputStream;
import java.io.InputStream;
import java.security.KeyStore;

/** A broker's TLS keystore, read once before the broker starts, so that a wrong path or password is one error. */
public final class KeyStores {
    private KeyStores() {}

    /** The keystore at {@code path} (PKCS12, or JKS: Java's PKCS12 reader takes both), opened with {@code password}. */
    public static KeyStore load(String path, String password) throws Exception {
        KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
        try (InputStream in = new FileInputStream(path)) {
            ks.load(in, password == null ? new char[0] : password.toCharArray());
        } catch (java.io.IOException e) {
            throw new java.io.IOException("keystore " + path + ": " + e.getMessage(), e);
        }
        return ks;
    }
}
