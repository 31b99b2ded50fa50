package org.pyjms.shim.artemis;

import java.io.File;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import org.apache.activemq.artemis.core.config.ClusterConnectionConfiguration;
import org.apache.activemq.artemis.core.config.Configuration;
import org.apache.activemq.artemis.core.config.ha.SharedStoreBackupPolicyConfiguration;
import org.apache.activemq.artemis.core.config.ha.SharedStorePrimaryPolicyConfiguration;
import org.apache.activemq.artemis.core.server.ActiveMQServer;
import org.apache.activemq.artemis.core.server.cluster.BackupManager;
import org.apache.activemq.artemis.core.server.impl.ActiveMQServerImpl;
import org.apache.activemq.artemis.core.server.cluster.impl.MessageLoadBalancingType;

/**
 * A failover pair of Artemis brokers over one data directory: Artemis's shared-store HA, as its
 * manual sets it up (a primary, a backup, and a cluster connection over which the backup announces
 * itself to the primary, so that clients with {@code ha=true} learn where to fail over).
 *
 * <p>Which broker is which is decided by the store, not by configuration: the broker that finds
 * the primary lock free is the primary; any other is a backup of the broker that serves, whose
 * address the serving broker keeps in the store ({@link #SERVING_FILE}). A backup that took over
 * stays the primary (no fail-back), and a restarted broker stands by for it in its turn. The
 * cluster connection authenticates with a password made once per store and kept in it, readable
 * by the store's owner only.
 */
final class PairConfig {
    /** Artemis's node manager holds a lock on this file while a broker serves (FileLockNodeManager). */
    static final String PRIMARY_LOCK = "serverlock.1";
    /** The address of the broker that serves, for the one that stands by. */
    static final String SERVING_FILE = "pyjms-pair.serving";
    /** The cluster connection's password, made by the first broker of the store. */
    static final String SECRET_FILE = "pyjms-pair.secret";
    static final String CLUSTER = "pyjms-pair";
    static final String SELF = "pyjms-pair-self";
    static final String PEER = "pyjms-pair-peer";
    /** How long a standby waits for the serving broker to say where it listens. */
    private static final long SERVING_WAIT_MS = 30_000;

    private PairConfig() {}

    /**
     * Makes {@code cfg} one broker of the pair over {@code dataDir}, listening on 127.0.0.1:{@code port};
     * true when it is a backup (another broker serves from the store now).
     */
    static boolean apply(Configuration cfg, File dataDir, int port, String keyStore, String keyStorePassword) throws Exception {
        if (keyStore != null) {
            // the backup's connector would be handed to clients with this broker's keystore as
            // their trust store: a TLS pair needs a trust store of the clients' own
            throw new IllegalArgumentException("an Artemis failover pair speaks plain TCP only: no keystore with a shared store");
        }
        cfg.addConnectorConfiguration(SELF, "tcp://127.0.0.1:" + port);
        cfg.setClusterUser(CLUSTER);
        cfg.setClusterPassword(secret(dataDir.toPath()));
        ClusterConnectionConfiguration cluster = new ClusterConnectionConfiguration()
                .setName(CLUSTER)
                .setConnectorName(SELF)
                .setAddress("")
                .setMessageLoadBalancingType(MessageLoadBalancingType.OFF)
                .setRetryInterval(250)
                .setMaxRetryInterval(1000)
                .setReconnectAttempts(-1);
        boolean backup = primaryLockHeld(new File(dataDir, PRIMARY_LOCK));
        if (backup) {
            String serving = servingAddress(dataDir.toPath());
            if (serving != null) {
                cfg.addConnectorConfiguration(PEER, serving);
                cluster.setStaticConnectors(List.of(PEER));
            }
            cfg.setHAPolicyConfiguration(new SharedStoreBackupPolicyConfiguration()
                    .setAllowFailBack(false)
                    .setFailoverOnServerShutdown(true));
        } else {
            cfg.setHAPolicyConfiguration(new SharedStorePrimaryPolicyConfiguration().setFailoverOnServerShutdown(true));
        }
        cfg.addClusterConfiguration(cluster);
        return backup;
    }

    /**
     * Waits until this backup has announced itself to the serving broker over the cluster
     * connection (or serves already, or stopped; at most {@link #SERVING_WAIT_MS}). A backup's
     * start returns before that: its activation thread connects to the serving broker and
     * announces itself later, seconds later on a loaded machine. The serving broker hands the
     * backup's address to its {@code ha=true} clients only from then on, and a client that does
     * not know it fails over to nothing: with {@code reconnectAttempts=-1} it retries the dead
     * broker for ever (ClientSessionFactoryImpl.failoverOrReconnect tries the other brokers of
     * its URL only once those attempts run out), and a call made meanwhile is sent on the dead
     * connection once callFailoverTimeout (30 s) has passed, and waits out callTimeout (30 s,
     * AMQ219014). So "standing by" means clients will fail over to it.
     */
    static void awaitAnnounced(ActiveMQServer server) throws InterruptedException {
        // without the serving broker's address it announces itself to nobody (servingAddress said so)
        if (!server.getConfiguration().getConnectorConfigurations().containsKey(PEER)) return;
        long deadline = System.currentTimeMillis() + SERVING_WAIT_MS;
        while (System.currentTimeMillis() < deadline) {
            BackupManager backups = server instanceof ActiveMQServerImpl impl ? impl.getBackupManager() : null;
            if (backups != null && backups.isStarted() && backups.isBackupAnnounced()) return;
            ActiveMQServer.SERVER_STATE state = server.getState();
            if (server.isActive() || state == ActiveMQServer.SERVER_STATE.STOPPING || state == ActiveMQServer.SERVER_STATE.STOPPED) return;
            Thread.sleep(50);
        }
        System.err.println("pyjms broker: this standby has not announced itself to the serving broker within "
                + SERVING_WAIT_MS / 1000 + " s; clients connected before it does will not fail over to it");
    }

    /** Records that the broker on {@code port} serves from the store now. */
    static void serving(File dataDir, int port) throws IOException {
        Path dir = dataDir.toPath();
        Path tmp = Files.createTempFile(dir, SERVING_FILE, ".tmp");
        Files.writeString(tmp, "tcp://127.0.0.1:" + port, StandardCharsets.US_ASCII);
        Files.move(tmp, dir.resolve(SERVING_FILE), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** The serving broker's address, waiting a while for a primary that is still starting. */
    private static String servingAddress(Path dir) throws IOException, InterruptedException {
        Path file = dir.resolve(SERVING_FILE);
        long deadline = System.currentTimeMillis() + SERVING_WAIT_MS;
        while (!Files.exists(file) && System.currentTimeMillis() < deadline) Thread.sleep(100);
        if (!Files.exists(file)) {
            System.err.println("pyjms broker: " + file + " does not say which broker serves; this one takes over when it ends, but clients will not fail over to it");
            return null;
        }
        String address = Files.readString(file, StandardCharsets.US_ASCII).trim();
        if (!address.matches("tcp://127\\.0\\.0\\.1:\\d{1,5}")) throw new IllegalStateException(file + ": not a broker's address: " + address);
        return address;
    }

    /** The store's cluster password, made (random, 0600 by the broker's umask) if it has none. */
    private static String secret(Path dir) throws IOException {
        Path file = dir.resolve(SECRET_FILE);
        if (!Files.exists(file)) {
            byte[] random = new byte[24];
            new SecureRandom().nextBytes(random);
            Path tmp = Files.createTempFile(dir, SECRET_FILE, ".tmp");
            Files.writeString(tmp, HexFormat.of().formatHex(random), StandardCharsets.US_ASCII);
            try {
                Files.createLink(file, tmp); // link(2) fails on an existing name: the other broker's, if it was first
            } catch (FileAlreadyExistsException e) {
                // the other broker's stands
            } finally {
                Files.deleteIfExists(tmp);
            }
        }
        return Files.readString(file, StandardCharsets.US_ASCII).trim();
    }

    /** Whether another process holds this lock file (tried and let go). */
    static boolean primaryLockHeld(File lockFile) throws IOException {
        if (!lockFile.exists()) return false;
        try (FileChannel channel = FileChannel.open(lockFile.toPath(), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            FileLock lock = channel.tryLock();
            if (lock == null) return true;
            lock.release();
            return false;
        } catch (OverlappingFileLockException e) {
            return true; // a broker in this JVM holds it
        }
    }
}
