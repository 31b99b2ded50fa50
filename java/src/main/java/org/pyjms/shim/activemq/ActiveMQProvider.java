package org.pyjms.shim.activemq;

import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.Destination;
import jakarta.jms.JMSException;
import jakarta.jms.Queue;
import java.util.Map;
import org.apache.activemq.ActiveMQConnection;
import org.apache.activemq.ActiveMQConnectionFactory;
import org.apache.activemq.ActiveMQSslConnectionFactory;
import org.apache.activemq.command.ActiveMQDestination;
import org.apache.activemq.command.ActiveMQQueue;
import org.apache.activemq.command.ActiveMQTempQueue;
import org.apache.activemq.command.ActiveMQTempTopic;
import org.pyjms.shim.Provider;

/** ActiveMQ Classic: URL schemes, temporary destinations, virtual-topic shared subscriptions. */
public final class ActiveMQProvider implements Provider {
    /** How long a new connection may wait for the broker's answer. */
    static final int CONNECT_TIMEOUT_MS = 30_000;
    /** How long a send waits for the advisory that announces another connection's temporary queue. */
    static final long TEMPORARY_PATIENCE_MS = 3_000;

    static {
        // received strings as they were sent (see ExactStrings)
        org.pyjms.shim.Codec.register(new ExactStrings());
    }

    @Override
    public String name() { return "ActiveMQ Classic " + ActiveMQConnection.class.getPackage().getImplementationVersion(); }

    @Override
    public int individualAcknowledgeMode() { return org.apache.activemq.ActiveMQSession.INDIVIDUAL_ACKNOWLEDGE; }

    /**
     * vm://NAME reaches the broker of that name in this process. ActiveMQ's client would
     * otherwise start one of its own when none runs, persistent, with a KahaDB store in the
     * working directory: a typo in a name would quietly become a new broker on the disk. A URL
     * that asks for that (create=, broker.*, brokerConfig=) keeps it.
     */
    static String inProcessOnly(String url) {
        if (!url.startsWith("vm://") || url.contains("create=") || url.contains("broker.") || url.contains("brokerConfig=")) {
            return url;
        }
        return url + (url.contains("?") ? "&" : "?") + "create=false";
    }

    @Override
    public ConnectionFactory factory(String url, Map<String, String> properties) throws Exception {
        // no URL: the properties name it (brokerURL), as for any factory class
        // TLS (ssl://, or trust and key stores given as properties): ActiveMQ's SSL factory takes
        // trustStore, trustStorePassword, keyStore... as bean properties; without them its
        // transport uses the JVM's default (javax.net.ssl.trustStore)
        boolean tls = (url != null && url.contains("ssl:"))
                || properties.keySet().stream().anyMatch(k -> k.startsWith("trustStore") || k.startsWith("keyStore"));
        ActiveMQConnectionFactory f = tls ? new ActiveMQSslConnectionFactory() : new ActiveMQConnectionFactory();
        if (url != null && !url.isEmpty()) f.setBrokerURL(inProcessOnly(url));
        // No ObjectMessage body is ever deserialized by pyjms; trust no package either.
        f.setTrustAllPackages(false);
        f.setTrustedPackages(java.util.List.of());
        // the broker dispatches by priority (pyjms brokers); re-sorting the client's prefetch
        // buffer as well made transacted consumers ~10x slower (measured)
        f.setMessagePrioritySupported(false);
        // ActiveMQ waits for ever by default for a broker's answer to a new connection: a broker
        // that accepts and never answers must give an error, not a hung program
        if (url == null || !url.contains("connectResponseTimeout")) f.setConnectResponseTimeout(CONNECT_TIMEOUT_MS);
        for (Map.Entry<String, String> e : properties.entrySet()) {
            if (!org.apache.activemq.util.IntrospectionSupport.setProperty(f, e.getKey(), e.getValue())) {
                throw new IllegalArgumentException("ActiveMQ's connection factory has no property " + e.getKey()
                        + " (or it cannot take '" + e.getValue() + "')");
            }
        }
        if ((url == null || url.isEmpty()) && !properties.containsKey("brokerURL")) {
            // ActiveMQ's own default is failover:tcp://localhost:61616, which retries for ever
            throw new IllegalArgumentException("ActiveMQ's connection factory needs a URL: give the brokerURL property");
        }
        return f;
    }

    /**
     * The transport marks itself failed on its reader thread as the socket breaks; the
     * exception listener hears of it later. A commit after that is refused before it is
     * written. (Its error text cannot tell: when a commit fails, the client first rolls back its
     * consumers, and their "Cannot send, channel has already failed" replaces the commit's own
     * error, even for a commit that was written and that the broker committed.)
     */
    @Override
    public boolean connectionLost(Connection c) {
        return c instanceof ActiveMQConnection a && (a.isTransportFailed() || a.isClosed());
    }

    /** ActiveMQ takes consumer options in the destination name. */
    @Override
    public Destination prefetching(Destination d, int prefetch) {
        if (d instanceof ActiveMQQueue q && q.getOptions() == null) {
            return new ActiveMQQueue(q.getPhysicalName() + "?consumer.prefetchSize=" + Math.max(0, prefetch));
        }
        return d;
    }

    /**
     * A browser is sent queueBrowserPrefetch messages ahead (500 by default); read in larger
     * batches, it waits for the broker at each batch: 20,000 messages browsed in batches of
     * 2,000 took ~18% less time with a prefetch of a batch (docs/performance.md).
     */
    @Override
    public Destination browsing(Connection c, Destination d, int ahead) {
        if (c instanceof ActiveMQConnection a && ahead > a.getPrefetchPolicy().getQueueBrowserPrefetch()) {
            return prefetching(d, ahead);
        }
        return d;
    }

    /** ActiveMQ Classic's own browser ends a browse before its messages at times: see EndFirstBrowse. */
    @Override
    public org.pyjms.shim.BrowseCursor browse(org.pyjms.shim.BrowseCursor.Opener opener) throws JMSException {
        return new EndFirstBrowse(opener.open());
    }

    @Override
    public Destination temporary(String key) {
        if (key.startsWith("temp-queue://")) return new ActiveMQTempQueue(key.substring(13));
        if (key.startsWith("temp-topic://")) return new ActiveMQTempTopic(key.substring(13));
        return null;
    }

    /**
     * ActiveMQ's client makes a foreign destination its own by its name, and a Qpid JMS
     * requester's temporary queue on ActiveMQ's AMQP connector is named by its address,
     * temp-queue://ID:..., which would name another one: a service beside the broker answers
     * through one of its own under the same key.
     */
    @Override
    public boolean takes(Destination d) { return d instanceof org.apache.activemq.command.ActiveMQDestination; }

    /**
     * ActiveMQ's client learns of other connections' temporary destinations from advisory
     * messages, and refuses a send to one it has not heard of as "a deleted Destination". The
     * request that names a reply queue can arrive before the advisory that announces it (0.2 s
     * before with 8,000 temporary queues on a quiet broker, more on a busy one), so the answer
     * waits for the advisory, up to a bound: a queue that is really gone still gets its error,
     * late by that bound.
     */
    @Override
    public void awaitKnown(jakarta.jms.Session session, Destination temporary) {
        if (!(session instanceof org.apache.activemq.ActiveMQSession s)
                || !(temporary instanceof ActiveMQDestination d)) return;
        long deadline = System.nanoTime() + TEMPORARY_PATIENCE_MS * 1_000_000L;
        try {
            while (s.getConnection().isDeleted(d) && System.nanoTime() < deadline) Thread.sleep(10);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** pyjms brokers virtualize every topic; stock brokers only VirtualTopic.* ones. */
    @Override
    public boolean virtualizesTopic(Connection c, String topic) {
        return topic.startsWith("VirtualTopic.") || isPyjmsBroker(c);
    }

    /** Brokers pyjms started (EmbeddedBroker) virtualize every topic and run the scheduler. */
    @Override
    public boolean isPyjmsBroker(Connection c) {
        try {
            String broker = ((ActiveMQConnection) c).getBrokerName();
            return broker != null && broker.startsWith(EmbeddedBroker.NAME_PREFIX);
        } catch (Exception e) {
            return false;
        }
    }

    /**
     * ActiveMQ's scheduler delays a message carrying AMQ_SCHEDULED_DELAY (when schedulerSupport
     * is on). When it fires it restamps the message and restarts its time-to-live, so the TTL
     * sent is what is left after the delay (at least 1 ms: a delay equal to the TTL expires).
     */
    @Override
    public long schedule(jakarta.jms.Message m, long delayMs, long ttl) throws JMSException {
        m.setLongProperty(org.apache.activemq.ScheduledMessage.AMQ_SCHEDULED_DELAY, delayMs);
        return ttl > 0 ? Math.max(1, ttl - delayMs) : ttl;
    }

    /** pyjms brokers always run the scheduler; others must be probed. */
    @Override
    public boolean schedulerKnownOn(Connection c) { return isPyjmsBroker(c); }

    @Override
    public boolean deleteIfUnused(Connection c, Queue q) {
        try {
            ((ActiveMQConnection) c).destroyDestination((ActiveMQDestination) q);
            return true;
        } catch (JMSException stillInUse) {
            return false;
        }
    }

    /**
     * ActiveMQ tells a new consumer of its queue advisory topic about every queue there is (a
     * DestinationInfo each, ADD), then about each one added or removed: read until it goes quiet.
     */
    @Override
    public String queueNames(Connection c, String prefix, long waitMs) throws JMSException {
        jakarta.jms.Session session = c.createSession(false, jakarta.jms.Session.AUTO_ACKNOWLEDGE);
        try {
            jakarta.jms.MessageConsumer advisories = session.createConsumer(
                    org.apache.activemq.advisory.AdvisorySupport.QUEUE_ADVISORY_TOPIC);
            java.util.Set<String> names = new java.util.TreeSet<>();
            long quiet = Math.max(50, Math.min(500, waitMs / 4));
            long deadline = System.currentTimeMillis() + waitMs;
            jakarta.jms.Message m = advisories.receive(waitMs);
            if (m == null) return null; // every broker has queues (its own DLQ at least): no answer
            while (m != null) {
                if (m instanceof org.apache.activemq.command.ActiveMQMessage am
                        && am.getDataStructure() instanceof org.apache.activemq.command.DestinationInfo info) {
                    String name = info.getDestination().getPhysicalName();
                    if (name.startsWith(prefix)) {
                        if (info.isAddOperation()) names.add(name);
                        else names.remove(name);
                    }
                }
                long left = deadline - System.currentTimeMillis();
                if (left <= 0) break;
                m = advisories.receive(Math.min(quiet, left));
            }
            return String.join("\n", names);
        } finally {
            session.close();
        }
    }

    public static ActiveMQQueue queue(String name) { return new ActiveMQQueue(name); }
}
