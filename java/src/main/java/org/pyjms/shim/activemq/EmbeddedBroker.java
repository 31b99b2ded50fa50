package org.pyjms.shim.activemq;

import java.io.File;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import org.apache.activemq.broker.BrokerService;
import org.apache.activemq.broker.SslContext;
import org.apache.activemq.broker.TransportConnector;
import org.apache.activemq.broker.region.policy.PolicyEntry;
import org.apache.activemq.broker.region.policy.PolicyMap;
import org.apache.activemq.broker.region.DestinationInterceptor;
import org.apache.activemq.broker.region.virtual.VirtualDestination;
import org.apache.activemq.broker.region.virtual.VirtualDestinationInterceptor;
import org.apache.activemq.broker.region.virtual.VirtualTopic;
import org.apache.activemq.command.ActiveMQQueue;
import org.apache.activemq.command.ActiveMQTopic;
import org.apache.activemq.store.kahadb.KahaDBPersistenceAdapter;

/**
 * A real ActiveMQ BrokerService in this JVM: non-persistent unless given a data directory,
 * scheduler support on, every connector bound to 127.0.0.1, every topic virtualized so that
 * shared subscriptions work (queue Consumer.SUB.TOPIC).
 */
public final class EmbeddedBroker {
    public static final String NAME_PREFIX = "pyjms";

    private final BrokerService broker;
    private final DestinationAttributes attributes;
    private final List<URI> asked = new ArrayList<>();
    /** The users and access rules, or null: the broker authenticates nobody. */
    private final Security security;

    private EmbeddedBroker(BrokerService broker, DestinationAttributes attributes, Security security) {
        this.broker = broker;
        this.attributes = attributes;
        this.security = security;
    }

    /** The queue attributes this broker enforces on every put. */
    public DestinationAttributes attributes() { return attributes; }

    /**
     * @param name broker name (must start with "pyjms"); clients reach it as vm://NAME?create=false
     * @param dataDir KahaDB directory, or null for a non-persistent broker
     * @param connectors URIs such as tcp://127.0.0.1:0 or stomp://127.0.0.1:61613
     */
    public static EmbeddedBroker start(String name, String dataDir, String[] connectors) throws Exception {
        return start(name, dataDir, connectors, null, null);
    }

    /**
     * With security: {@code users} rows are "user", "password", "group,group"; {@code rules}
     * rows are "queue"|"topic", destination pattern, read groups, write groups, admin groups.
     * Advisory topics and temporary destinations stay open to every authenticated user.
     */
    public static EmbeddedBroker start(String name, String dataDir, String[] connectors, String[][] users,
                                       String[][] rules) throws Exception {
        return start(name, dataDir, connectors, users, rules, null, null);
    }

    /**
     * With TLS as well: the ssl://, stomp+ssl:// and amqp+ssl:// connectors present the key in
     * {@code keyStore} (PKCS12 or JKS; the key's password is the store's), null for none.
     */
    public static EmbeddedBroker start(String name, String dataDir, String[] connectors, String[][] users,
                                       String[][] rules, String keyStore, String keyStorePassword) throws Exception {
        return start(name, dataDir, connectors, users, rules, keyStore, keyStorePassword, null);
    }

    /**
     * As one broker of a failover pair over one data directory when {@code standingBy} is not
     * null: if another broker holds the store, this call waits as its standby (having run
     * {@code standingBy} once) and returns once it has taken the store over (StandbyLocker).
     * Null: a held store makes the call wait, silently, as ActiveMQ does (pyjms's CLI refuses
     * such a directory before it gets here).
     */
    public static EmbeddedBroker start(String name, String dataDir, String[] connectors, String[][] users,
                                       String[][] rules, String keyStore, String keyStorePassword,
                                       Runnable standingBy) throws Exception {
        if (!name.startsWith(NAME_PREFIX)) throw new IllegalArgumentException("broker name must start with " + NAME_PREFIX);
        BrokerService b = new BrokerService();
        b.setBrokerName(name);
        b.setUseJmx(false);
        b.setUseShutdownHook(false);
        b.setSchedulerSupport(true);
        if (dataDir == null) {
            b.setPersistent(false);
        } else {
            // fixed sub-directories, so a restarted broker with another name finds its store
            b.setPersistent(true);
            b.setDataDirectoryFile(new File(dataDir));
            KahaDBPersistenceAdapter kahadb = new KahaDBPersistenceAdapter();
            kahadb.setDirectory(new File(dataDir, "kahadb"));
            if (standingBy != null) kahadb.setLocker(new StandbyLocker(standingBy));
            b.setPersistenceAdapter(kahadb);
            b.setSchedulerDirectoryFile(new File(dataDir, "scheduler"));
        }
        VirtualTopic everyTopic = DelayedPublications.everyTopic();
        VirtualDestinationInterceptor virtual = new VirtualDestinationInterceptor();
        virtual.setVirtualDestinations(new VirtualDestination[] {everyTopic});
        b.setDestinationInterceptors(new DestinationInterceptor[] {virtual});
        // queues deliver by priority, as IBM MQ's default MsgDeliverySequence(PRIORITY) does
        PolicyEntry everyQueue = new PolicyEntry();
        everyQueue.setQueue(">");
        everyQueue.setPrioritizedMessages(true);
        // browsers (browse mode, DLQ handler) see deep queues, not just the first 400 messages;
        // a bigger page lets transacted and selector consumers reach further too
        everyQueue.setMaxBrowsePageSize(20_000);
        everyQueue.setMaxPageSize(2_000);
        // no expiry scan (ActiveMQ's runs every 30 s): as on IBM MQ (E09), an expired message stays
        // on its queue, counting towards its depth, until a get or browse finds it and discards it
        // (the Artemis broker likewise: EmbeddedArtemis). The conformance kit's E09 failed once
        // when the scan of a queue it had used before ran between its put and its depth check
        everyQueue.setExpireMessagesPeriod(0);
        // the delay processor's drained slot queues are removed once empty and idle
        PolicyEntry delaySlots = new PolicyEntry();
        delaySlots.setQueue(org.pyjms.shim.Contract.SLOT_PREFIX + ">");
        delaySlots.setPrioritizedMessages(true);
        // one transaction of the delay processor gets at most a page of a slot: a due slot
        // moves in one transaction, not in chunks of the default 200
        delaySlots.setMaxPageSize(2_000);
        // a slot holds its messages for up to the longest delay: each keeps only its marshalled
        // form (CompactSlots marshals what comes over vm://), not also the unmarshalled
        // properties and text
        delaySlots.setReduceMemoryFootprint(true);
        delaySlots.setGcInactiveDestinations(true);
        delaySlots.setInactiveTimeoutBeforeGC(30_000);
        // leader election of pyjms's services (pyjms.api.leadership): the broker picks one
        // consumer of each PYJMS.LEADER.* queue, whatever protocol it came by, and fails over
        PolicyEntry leaders = new PolicyEntry();
        leaders.setQueue(org.pyjms.shim.Contract.LEADER_PREFIX + ">");
        leaders.setAllConsumersExclusiveByDefault(true);
        PolicyMap policies = new PolicyMap();
        policies.setPolicyEntries(List.of(everyQueue, delaySlots, leaders));
        b.setDestinationPolicy(policies);
        b.setSchedulePeriodForDestinationPurge(10_000);
        // before the connectors: each TLS one binds with the broker's SslContext
        if (keyStore != null) b.setSslContext(sslContext(keyStore, keyStorePassword));
        for (String c : connectors) {
            URI uri = new URI(c);
            String host = uri.getHost();
            if (!"127.0.0.1".equals(host) && !"localhost".equals(host)) {
                throw new IllegalArgumentException("connector " + c + " must bind to 127.0.0.1");
            }
            b.addConnector(c);
        }
        DestinationAttributes attributes = new DestinationAttributes();
        Security security = users == null ? null : Security.of(users, rules);
        if (security != null) {
            attributes.authorizeTargetsWith(security.map);
            // the broker stamps who sent each message (the user name its sign-in checked, over
            // every protocol), replacing whatever the client set: pyjms's services read it.
            // (useAuthenticatedPrincipalForJMSXUserID would look for activemq-jaas's UserPrincipal,
            // a class this classpath lacks; the name the sign-in checked is that user anyway.)
            b.setPopulateJMSXUserID(true);
            b.setPlugins(new org.apache.activemq.broker.BrokerPlugin[] {
                security.authentication, security.authorization, Security.stampedSenderOnly(), attributes,
                new CompactSlots()});
        } else {
            b.setPlugins(new org.apache.activemq.broker.BrokerPlugin[] {attributes, new CompactSlots()});
        }
        b.start();
        if (!b.waitUntilStarted(30_000)) throw new IllegalStateException("broker " + name + " did not start");
        EmbeddedBroker e = new EmbeddedBroker(b, attributes, security);
        for (String c : connectors) e.asked.add(new URI(c));
        return e;
    }

    private static SslContext sslContext(String keyStore, String password) throws Exception {
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(org.pyjms.shim.KeyStores.load(keyStore, password), password == null ? new char[0] : password.toCharArray());
        return new SslContext(kmf.getKeyManagers(), null, null);
    }

    public String name() { return broker.getBrokerName(); }

    /**
     * Whether the broker's own access rules let {@code user} write to the destination
     * ({@code kind}: queue, topic, temp-queue or temp-topic); true on a broker without users.
     */
    public boolean mayWrite(String user, String kind, String name) {
        if (security == null) return true;
        return switch (kind) {
            case "temp-queue", "temp-topic" -> security.mayWriteTemporary(user);
            case "topic" -> security.mayWrite(user, new ActiveMQTopic(name));
            default -> security.mayWrite(user, new ActiveMQQueue(name));
        };
    }

    /** Addresses the connectors actually bound (port 0 resolved). */
    public String[] connectUris() throws Exception {
        List<String> uris = new ArrayList<>();
        List<TransportConnector> connectors = broker.getTransportConnectors();
        for (int i = 0; i < connectors.size(); i++) {
            // the address asked for (127.0.0.1) with the port the server actually bound
            URI want = asked.get(i), bound = connectors.get(i).getConnectUri();
            uris.add(new URI(want.getScheme(), null, want.getHost(), bound.getPort(), null, null, null).toString());
        }
        return uris.toArray(new String[0]);
    }

    public BrokerService service() { return broker; }

    /** The addresses of a topic's subscribers now (see DelayedPublications). */
    public String[] subscribersOf(String topic) throws Exception {
        return DelayedPublications.subscribersOf(broker, topic);
    }

    /** The selector of a durable subscription now, or null (see DelayedPublications). */
    public String durableSelector(String topic, String clientId, String name) throws Exception {
        return DelayedPublications.durableSelector(broker, topic, clientId, name);
    }

    /**
     * Removes a queue or topic (kind "queue" or "topic") from the broker, as IBM MQ's DELETE
     * QLOCAL or DELETE TOPIC; the admin service first checks that it is empty and unused.
     */
    public void removeDestination(String kind, String name) throws Exception {
        broker.removeDestination(kind.equals("queue") ? new ActiveMQQueue(name) : new ActiveMQTopic(name));
    }

    public void stop() throws Exception {
        broker.stop();
        broker.waitUntilStopped();
    }
}
