package org.pyjms.shim.artemis;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.activemq.artemis.api.core.QueueConfiguration;
import org.apache.activemq.artemis.api.core.RoutingType;
import org.apache.activemq.artemis.api.core.SimpleString;
import org.apache.activemq.artemis.api.core.TransportConfiguration;
import org.apache.activemq.artemis.core.config.Configuration;
import org.apache.activemq.artemis.core.config.impl.ConfigurationImpl;
import org.apache.activemq.artemis.core.remoting.impl.invm.InVMConnector;
import org.apache.activemq.artemis.core.remoting.impl.netty.NettyAcceptor;
import org.apache.activemq.artemis.core.security.CheckType;
import org.apache.activemq.artemis.core.security.Role;
import org.apache.activemq.artemis.core.filter.Filter;
import org.apache.activemq.artemis.core.server.ActiveMQServer;
import org.apache.activemq.artemis.core.server.JournalType;
import org.apache.activemq.artemis.core.server.Queue;
import org.apache.activemq.artemis.core.server.embedded.EmbeddedActiveMQ;
import org.apache.activemq.artemis.core.server.impl.AddressInfo;
import org.apache.activemq.artemis.core.settings.impl.AddressFullMessagePolicy;
import org.apache.activemq.artemis.core.settings.impl.AddressSettings;
import org.apache.activemq.artemis.jms.client.ActiveMQDestination;
import org.apache.activemq.artemis.spi.core.remoting.Acceptor;
import org.pyjms.shim.Contract;

/**
 * An Apache Artemis broker in this JVM: an in-vm acceptor (vm://N, N unique in the JVM) and,
 * when asked, one TCP acceptor on 127.0.0.1 speaking CORE and AMQP on the same port.
 * Non-persistent unless given a data directory (then a NIO journal under it). Every address has
 * the dead-letter queue; expired messages are dropped when a get finds them, or moved to an expiry
 * queue if one is named.
 */
public final class EmbeddedArtemis {
    public static final String NAME_PREFIX = "pyjms";
    private static final String TCP_ACCEPTOR = "tcp";
    /** Artemis's in-vm server ids; pyjms's Artemis brokers in one JVM each take the next. */
    private static final AtomicInteger NEXT_VM_ID = new AtomicInteger();
    /** The brokers of this class running in this JVM. */
    private static final AtomicInteger RUNNING = new AtomicInteger();
    private volatile boolean stopped;
    private static final Pattern SUBSCRIBER_CLAUSE = Pattern.compile(Contract.SUBSCRIBER + " = '([^']*)'");

    private final EmbeddedActiveMQ embedded;
    private final int vmId;
    private final QueueLimits limits;
    /** The users and access rules, or null: the broker authenticates nobody. */
    private final ArtemisSecurity security;

    private EmbeddedArtemis(EmbeddedActiveMQ embedded, int vmId, QueueLimits limits, ArtemisSecurity security) {
        this.embedded = embedded;
        this.vmId = vmId;
        this.limits = limits;
        this.security = security;
    }

    /**
     * @param name broker name (must start with "pyjms")
     * @param dataDir journal directory, or null for a non-persistent broker
     * @param tcpPort the CORE+AMQP port on 127.0.0.1 (0: a free one), or -1 for in-vm only
     * @param users rows "user", "password", "group,group"; null: no security
     * @param rules rows "queue"|"topic", pattern, read groups, write groups, admin groups
     * @param deadLetterQueue where undeliverable messages go (Artemis's max-delivery-attempts)
     * @param expiryQueue where expired messages go, or null to drop them
     */
    public static EmbeddedArtemis start(String name, String dataDir, int tcpPort, String[][] users, String[][] rules,
                                        String deadLetterQueue, String expiryQueue) throws Exception {
        return start(name, dataDir, tcpPort, users, rules, deadLetterQueue, expiryQueue, null, null);
    }

    /**
     * With TLS as well: the TCP acceptor (CORE and AMQP) speaks only TLS, presenting the key in
     * {@code keyStore} (PKCS12 or JKS; the key's password is the store's); null for plain TCP.
     */
    public static EmbeddedArtemis start(String name, String dataDir, int tcpPort, String[][] users, String[][] rules,
                                        String deadLetterQueue, String expiryQueue, String keyStore,
                                        String keyStorePassword) throws Exception {
        return start(name, dataDir, tcpPort, users, rules, deadLetterQueue, expiryQueue, keyStore, keyStorePassword, null);
    }

    /**
     * As one broker of a failover pair over one data directory when {@code standingBy} is not
     * null: Artemis's shared-store HA, with a cluster connection over which the standby announces
     * itself, so that clients on {@code ha=true} learn of it and fail over to it. The broker that
     * finds the store's primary lock free is the primary and serves. Any other is a backup of the
     * one that serves (whose address the serving broker keeps in the store, {@link #PAIR_SERVING}):
     * this call runs {@code standingBy} once it has announced itself to that broker (so that its
     * clients will fail over to it) and waits until that broker has died, SIGKILL included, then
     * returns serving. A backup that has served stays the primary (no fail-back):
     * a restarted broker stands by for it in turn.
     */
    public static EmbeddedArtemis start(String name, String dataDir, int tcpPort, String[][] users, String[][] rules,
                                        String deadLetterQueue, String expiryQueue, String keyStore,
                                        String keyStorePassword, Runnable standingBy) throws Exception {
        if (standingBy != null && dataDir == null) throw new IllegalArgumentException("a broker of a failover pair shares a data directory with the other");
        if (!name.startsWith(NAME_PREFIX)) throw new IllegalArgumentException("broker name must start with " + NAME_PREFIX);
        if (tcpPort < -1 || tcpPort > 65535) throw new IllegalArgumentException("port " + tcpPort + " is not a TCP port (0..65535)");
        int vmId = NEXT_VM_ID.getAndIncrement();
        Configuration cfg = new ConfigurationImpl();
        cfg.setName(name);
        cfg.setJMXManagementEnabled(false);
        cfg.setGracefulShutdownEnabled(false);
        cfg.setCriticalAnalyzer(false); // it halts a broker whose threads stall: a busy 2-core test machine
        cfg.setMaxDiskUsage(-1); // no blocking of producers on a nearly full disk
        // no expiry scan: as on IBM MQ (E09), an expired message stays on its queue, counting towards
        // its depth, until a get or browse finds it and discards it
        cfg.setMessageExpiryScanPeriod(-1);
        cfg.setPersistenceEnabled(dataDir != null);
        // a connection past its TTL is dropped within half a second (2 s by default): a killed
        // pyjms service's leadership and transactions pass on soon after its TTL (ArtemisPlugin.service_factory)
        cfg.setConnectionTtlCheckInterval(500);
        if (dataDir != null) {
            cfg.setJournalType(JournalType.NIO);
            cfg.setJournalDirectory(new File(dataDir, "journal").getPath());
            cfg.setBindingsDirectory(new File(dataDir, "bindings").getPath());
            cfg.setPagingDirectory(new File(dataDir, "paging").getPath());
            cfg.setLargeMessagesDirectory(new File(dataDir, "largemessages").getPath());
            cfg.setNodeManagerLockDirectory(dataDir);
        }
        boolean backup = false;
        if (standingBy != null) {
            if (tcpPort <= 0) throw new IllegalArgumentException("a broker of a failover pair listens on a fixed port (its partner's clients must know it): not " + tcpPort);
            backup = PairConfig.apply(cfg, new File(dataDir), tcpPort, keyStore, keyStorePassword);
        }
        cfg.addAcceptorConfiguration("in-vm", "vm://" + vmId);
        if (tcpPort >= 0) {
            cfg.addAcceptorConfiguration(TCP_ACCEPTOR, "tcp://127.0.0.1:" + tcpPort + "?protocols=CORE,AMQP");
            if (keyStore != null) {
                // Artemis would log a bad keystore and start without the port: refuse it here
                org.pyjms.shim.KeyStores.load(keyStore, keyStorePassword);
                // set as parameters, not in the URI: a path or password needs no escaping there
                for (TransportConfiguration t : cfg.getAcceptorConfigurations()) {
                    if (!TCP_ACCEPTOR.equals(t.getName())) continue;
                    t.getParams().put("sslEnabled", "true");
                    t.getParams().put("keyStorePath", keyStore);
                    t.getParams().put("keyStorePassword", keyStorePassword == null ? "" : keyStorePassword);
                    String lower = keyStore.toLowerCase();
                    t.getParams().put("keyStoreType", lower.endsWith(".jks") ? "JKS" : "PKCS12");
                }
            }
        }

        AddressSettings every = new AddressSettings();
        every.setDeadLetterAddress(SimpleString.of(deadLetterQueue));
        if (expiryQueue != null) every.setExpiryAddress(SimpleString.of(expiryQueue));
        // paging writes to disk (./data by default): a non-persistent broker writes nothing, and
        // holds producers back when memory is full instead, as ActiveMQ's flow control does
        if (dataDir == null) every.setAddressFullMessagePolicy(AddressFullMessagePolicy.BLOCK);
        cfg.addAddressSetting("#", every);
        // the delay processor's queues: its rollbacks must never make a staged message "poison"
        // (ActiveMQ's client has no redelivery limit for it; Artemis counts deliveries in the broker)
        for (String processors : new String[] {"SYSTEM.DDELAY.#", "PYJMS.#"}) {
            cfg.addAddressSetting(processors, new AddressSettings().setMaxDeliveryAttempts(-1));
        }
        // leader election of pyjms's services (pyjms.api.leadership): one consumer of each
        // PYJMS.LEADER.* queue gets its messages, whoever made the queue and by what protocol
        cfg.addAddressSetting(Contract.LEADER_PREFIX + "#",
                new AddressSettings().setMaxDeliveryAttempts(-1).setDefaultExclusiveQueue(true));
        cfg.addQueueConfiguration(QueueConfiguration.of(deadLetterQueue).setRoutingType(RoutingType.ANYCAST));
        // configured, not auto-created: how a client knows a pyjms broker (ArtemisProvider.isPyjmsBroker)
        cfg.addQueueConfiguration(QueueConfiguration.of(Contract.ADMIN_QUEUE).setRoutingType(RoutingType.ANYCAST));
        if (expiryQueue != null) {
            cfg.addQueueConfiguration(QueueConfiguration.of(expiryQueue).setRoutingType(RoutingType.ANYCAST));
        }

        EmbeddedActiveMQ embedded = new EmbeddedActiveMQ();
        cfg.setSecurityEnabled(users != null);
        ArtemisSecurity security = users == null ? null : new ArtemisSecurity(users);
        if (security != null) {
            // each message carries who sent it (JMSXUserID): pyjms's admin service reads it
            cfg.setPopulateValidatedUser(true);
            for (Map.Entry<String, Set<Role>> e : ArtemisSecurity.settings(rules).entrySet()) {
                cfg.putSecurityRoles(e.getKey(), e.getValue());
            }
            embedded.setSecurityManager(security);
        }
        embedded.setConfiguration(cfg);
        embedded.createActiveMQServer();
        QueueLimits limits = new QueueLimits(embedded.getActiveMQServer());
        cfg.registerBrokerPlugin(limits);
        if (security != null) cfg.registerBrokerPlugin(new ArtemisSecurity.StampEveryProtocol());
        // how an AMQP client knows a pyjms broker (amqp.AmqpPeer.isPyjmsBroker), from the open frame
        cfg.registerBrokerPlugin(new AmqpOpenProperty(name));
        embedded.start();
        if (backup) {
            // a backup's start returns at once, before it serves: it waits for the primary lock.
            // It says it stands by once the serving broker knows of it (PairConfig.awaitAnnounced)
            PairConfig.awaitAnnounced(embedded.getActiveMQServer());
            standingBy.run();
            while (!embedded.getActiveMQServer().waitForActivation(250, TimeUnit.MILLISECONDS)) {
                ActiveMQServer.SERVER_STATE state = embedded.getActiveMQServer().getState();
                if (state == ActiveMQServer.SERVER_STATE.STOPPING || state == ActiveMQServer.SERVER_STATE.STOPPED) {
                    throw new IllegalStateException("the standby broker stopped before it took the store over");
                }
            }
        }
        if (standingBy != null) PairConfig.serving(new File(dataDir), tcpPort);
        RUNNING.incrementAndGet();
        EmbeddedArtemis started = new EmbeddedArtemis(embedded, vmId, limits, security);
        Acceptor tcp = tcpPort < 0 ? null : started.server().getRemotingService().getAcceptor(TCP_ACCEPTOR);
        if (tcpPort >= 0 && !(tcp instanceof NettyAcceptor n && n.isStarted() && n.getActualPort() > 0)) {
            // Artemis logs an acceptor that cannot start (a port in use...) and runs without it
            started.stop();
            throw new IllegalStateException("cannot listen on 127.0.0.1:" + tcpPort + " (the log above says why)");
        }
        return started;
    }

    public String name() { return server().getConfiguration().getName(); }

    /** The in-vm URL of this broker, for clients in this JVM. */
    public String vmUrl() { return "vm://" + vmId; }

    /** The TCP port the CORE+AMQP acceptor bound (port 0 resolved), or -1 without one. */
    public int tcpPort() {
        Acceptor a = server().getRemotingService().getAcceptor(TCP_ACCEPTOR);
        return a instanceof NettyAcceptor n ? n.getActualPort() : -1;
    }

    public ActiveMQServer server() { return embedded.getActiveMQServer(); }

    /**
     * Whether the broker's own security settings let {@code user} send to the destination
     * ({@code kind}: queue, topic, temp-queue or temp-topic; the address is its name), decided
     * as the broker decides a send; true on a broker without users.
     */
    public boolean mayWrite(String user, String kind, String name) {
        if (security == null) return true;
        Set<Role> roles = server().getSecurityRepository().getMatch(name);
        return security.authorize(security.subjectOf(user), roles, CheckType.SEND, name);
    }

    /** The queue attributes this broker enforces on every put. */
    public QueueLimits limits() { return limits; }

    /** Messages on a queue now (0 if it does not exist). */
    public long queueDepth(String queue) {
        Queue q = server().locateQueue(SimpleString.of(queue));
        return q == null ? 0 : q.getMessageCount();
    }

    /** The names of the queues bound to an address now (a topic's subscription queues). */
    /**
     * The addresses of a topic's subscribers now, sorted (IBM MQ's D16): each subscription queue's
     * filter carries its address in pyjms's clause (as on ActiveMQ: see
     * activemq.DelayedPublications); "?" for a subscription without one (not made by pyjms).
     */
    public String[] subscribersOf(String topic) throws Exception {
        TreeSet<String> out = new TreeSet<>();
        for (SimpleString name : server().bindingQuery(SimpleString.of(topic)).getQueueNames()) {
            Queue q = server().locateQueue(name);
            if (q == null || q.getRoutingType() != RoutingType.MULTICAST) continue;
            Filter f = q.getFilter();
            Matcher m = f == null ? null : SUBSCRIBER_CLAUSE.matcher(f.getFilterString().toString());
            out.add(m != null && m.find() ? m.group(1) : "?");
        }
        return out.toArray(new String[0]);
    }

    /** The selector of a durable subscription now (its queue's filter), or null if it does not exist. */
    public String durableSelector(String topic, String clientId, String name) throws Exception {
        SimpleString queue = ActiveMQDestination.createQueueNameForSubscription(true, clientId, name);
        Queue q = server().locateQueue(queue);
        if (q == null || !q.getAddress().toString().equals(topic)) return null;
        return q.getFilter() == null ? "" : q.getFilter().getFilterString().toString();
    }

    /**
     * Every queue and topic now (not temporary or internal ones), one row each, tab-separated:
     * kind ("queue" or "topic"), name, depth, consumers, messages put, messages taken. A topic's
     * depth, consumers and takes are its subscription queues' sums.
     */
    public String[] destinations() throws Exception {
        List<String> out = new ArrayList<>();
        for (SimpleString address : server().getPostOffice().getAddresses()) {
            AddressInfo info = server().getAddressInfo(address);
            if (info == null || info.isInternal() || info.isTemporary()) continue;
            // the broker's own management and notification addresses are not the user's
            if (address.equals(server().getConfiguration().getManagementAddress())
                    || address.equals(server().getConfiguration().getManagementNotificationAddress())) continue;
            if (info.getRoutingTypes().contains(RoutingType.ANYCAST)) {
                Queue q = server().locateQueue(address);
                if (q != null && !q.isTemporary() && !q.isInternalQueue()) {
                    out.add(row("queue", address, q.getMessageCount(), q.getConsumerCount(),
                            q.getMessagesAdded(), q.getMessagesAcknowledged()));
                }
            }
            if (info.getRoutingTypes().contains(RoutingType.MULTICAST)) {
                long depth = 0, consumers = 0, taken = 0;
                for (SimpleString name : server().bindingQuery(address).getQueueNames()) {
                    Queue q = server().locateQueue(name);
                    if (q == null || q.getRoutingType() != RoutingType.MULTICAST) continue;
                    depth += q.getMessageCount();
                    consumers += q.getConsumerCount();
                    taken += q.getMessagesAcknowledged();
                }
                out.add(row("topic", address, depth, consumers, info.getRoutedMessageCount(), taken));
            }
        }
        return out.toArray(new String[0]);
    }

    private static String row(String kind, SimpleString name, long depth, long consumers, long put, long taken) {
        return kind + "\t" + name + "\t" + depth + "\t" + consumers + "\t" + put + "\t" + taken;
    }

    /** Whether the broker has the queue (an anycast queue) or topic (a multicast address) now. */
    public boolean hasDestination(String kind, String name) throws Exception {
        if (kind.equals("queue")) {
            Queue q = server().locateQueue(SimpleString.of(name));
            return q != null && q.getRoutingType() == RoutingType.ANYCAST;
        }
        AddressInfo info = server().getAddressInfo(SimpleString.of(name));
        return info != null && info.getRoutingTypes().contains(RoutingType.MULTICAST);
    }

    /**
     * Removes a queue (its anycast queue and address) or a topic (its multicast address, with
     * no subscription left) from the broker, as IBM MQ's DELETE QLOCAL or DELETE TOPIC; the
     * admin service first checks that it is empty and unused.
     */
    public void removeDestination(String kind, String name) throws Exception {
        SimpleString address = SimpleString.of(name);
        if (kind.equals("queue") && server().locateQueue(address) != null) {
            server().destroyQueue(address, null, true); // refused while a consumer is on it
        }
        if (server().getAddressInfo(address) != null) server().removeAddressInfo(address, null);
    }

    public String[] queuesOf(String address) throws Exception {
        List<String> out = new ArrayList<>();
        for (SimpleString q : server().bindingQuery(SimpleString.of(address)).getQueueNames()) out.add(q.toString());
        return out.toArray(new String[0]);
    }

    public void stop() throws Exception {
        if (stopped) return;
        stopped = true;
        embedded.stop();
        // the in-vm connector's threads are not daemons and idle for 60 s before they end, which
        // holds the JVM's exit (a SIGTERMed `pyjms broker` took 30 s and more); the pool is shared
        // by every broker in this JVM, so it goes with the last one
        if (RUNNING.decrementAndGet() == 0) InVMConnector.resetThreadPool();
    }
}
