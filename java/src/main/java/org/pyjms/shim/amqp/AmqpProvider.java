package org.pyjms.shim.amqp;

import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import java.util.Map;
import org.apache.qpid.jms.JmsConnection;
import org.apache.qpid.jms.JmsConnectionFactory;
import org.apache.qpid.jms.JmsConnectionMetaData;
import org.apache.qpid.jms.JmsMessageConsumer;
import org.apache.qpid.jms.policy.JmsDefaultDeserializationPolicy;
import org.pyjms.shim.Provider;
import org.pyjms.shim.Providers;

/**
 * Any AMQP 1.0 broker through Qpid JMS (amqp://, amqps://, amqpws://, amqpwss://). Delivery
 * delay and shared subscriptions are the client's own, where the peer offers them (the
 * DELAYED_DELIVERY and SHARED-SUBS capabilities); see AmqpPeer.
 */
public final class AmqpProvider implements Provider {
    /** How long a synchronous request (open a consumer or producer, commit...) may wait. */
    static final long REQUEST_TIMEOUT_MS = 30_000;

    @Override
    public String name() {
        JmsConnectionMetaData client = JmsConnectionMetaData.INSTANCE;
        return client.getJMSProviderName() + " " + client.getProviderVersion();
    }

    /** Qpid JMS takes its options as URL query parameters (jms.*, amqp.*, transport.*) or as properties. */
    @Override
    public ConnectionFactory factory(String url, Map<String, String> properties) throws Exception {
        // no URL: the properties name it (remoteURI), as for any factory class
        JmsConnectionFactory f = url == null || url.isEmpty() ? new JmsConnectionFactory() : new JmsConnectionFactory(waitingOnFewCpus(url));
        // pyjms never deserializes an ObjectMessage body; nor may anything else in this JVM
        JmsDefaultDeserializationPolicy noObjects = new JmsDefaultDeserializationPolicy();
        noObjects.setDenyList(JmsDefaultDeserializationPolicy.CATCH_ALL_WILDCARD);
        f.setDeserializationPolicy(noObjects);
        // Qpid JMS waits for ever by default for a broker's answer to an attach or a commit: a
        // broker that never answers must give an error, not a hung program (a URL's
        // jms.requestTimeout or a requestTimeout property still chooses otherwise)
        if (Providers.unset(url, properties, "jms.requestTimeout", "requestTimeout")) f.setRequestTimeout(REQUEST_TIMEOUT_MS);
        if (!properties.isEmpty()) {
            String remote = properties.get("remoteURI");
            if (remote != null) {
                properties = new java.util.HashMap<>(properties);
                properties.put("remoteURI", waitingOnFewCpus(remote));
            }
            Map<String, String> unused = f.setProperties(properties);
            if (!unused.isEmpty()) {
                throw new IllegalArgumentException("Qpid JMS's connection factory has no propert"
                        + (unused.size() == 1 ? "y " : "ies ") + String.join(", ", unused.keySet()));
            }
        }
        return f;
    }

    /** Qpid JMS's URL option for how a caller waits on its I/O thread (ProviderFutureFactory). */
    static final String FUTURE_TYPE = "provider.futureType";

    /**
     * The URL with {@code provider.futureType=balanced} when it names no future type and the
     * JVM sees fewer than 4 CPUs. Every send and acknowledgement waits on Qpid JMS's I/O
     * thread; on fewer than 4 CPUs Qpid JMS waits by parking at once ("conservative"), and each
     * wait then costs two thread switches. "balanced" first spins 10 times and yields up to 90
     * before it parks. Raw Qpid JMS to Artemis over tcp on 2 CPUs, 50,000 non-persistent
     * messages sent then received, 5 interleaved rounds: 15,800 msg/s conservative, 20,400
     * balanced, 20,700 progressive (Qpid's own choice from 4 CPUs up); client CPU per message
     * 41, 35 and 34 µs (docs/performance.md). A URL that names one keeps it.
     */
    public static String waitingOnFewCpus(String url) {
        return waitingOnFewCpus(url, Runtime.getRuntime().availableProcessors());
    }

    public static String waitingOnFewCpus(String url, int cpus) {
        if (url.contains(FUTURE_TYPE) || cpus >= 4) return url;
        int fragment = url.indexOf('#');
        String head = fragment < 0 ? url : url.substring(0, fragment), tail = fragment < 0 ? "" : url.substring(fragment);
        // failover:(amqp://a?x=1,amqp://b)?failover.y=2: the nested URLs' queries are not its own
        boolean hasQuery = head.indexOf('?', head.lastIndexOf(')') + 1) >= 0;
        return head + (hasQuery ? "&" : "?") + FUTURE_TYPE + "=balanced" + tail;
    }

    /**
     * A broker pyjms started, reached over AMQP (an ActiveMQ Classic or an Artemis one, known by
     * its open frame: AmqpPeer.isPyjmsBroker): its admin service answers, and it addresses
     * delayed publications to subscribers whatever the protocol.
     */
    @Override
    public boolean isPyjmsBroker(Connection c) {
        return AmqpPeer.of(c).isPyjmsBroker();
    }

    /** Artemis reads its duplicate-detection header from AMQP application properties too. */
    @Override
    public boolean peerDetectsDuplicates(Connection c) {
        return AmqpPeer.of(c).isArtemis();
    }

    @Override
    public String peerProduct(Connection c) {
        return AmqpPeer.of(c).product();
    }

    /** The peer honours the client's delivery delay only if it offers DELAYED_DELIVERY. */
    @Override
    public boolean peerDelaysDelivery(Connection c) {
        return AmqpPeer.of(c).delayedDelivery();
    }

    /**
     * ActiveMQ Classic offers DELAYED_DELIVERY whether or not its scheduler runs (without it,
     * delays are ignored); brokers pyjms started always run it.
     */
    @Override
    public boolean peerDelayKnown(Connection c) {
        AmqpPeer peer = AmqpPeer.of(c);
        return !peer.isActiveMQClassic() || peer.isPyjmsBroker();
    }

    /** ActiveMQ Classic maps DELAYED_DELIVERY to its scheduler, which restamps what it delivers. */
    @Override
    public boolean peerRestampsDelayed(Connection c) {
        return AmqpPeer.of(c).isActiveMQClassic();
    }

    /**
     * Qpid JMS marks its connection failed on its I/O thread as the transport breaks; the
     * exception listener hears of it later. A commit after that is refused before it is written.
     */
    @Override
    public boolean connectionLost(Connection c) {
        return c instanceof JmsConnection connection && (connection.isFailed() || connection.isClosed());
    }

    /** Qpid JMS has async sends, receiveBody and listener redelivery of its own. */
    @Override
    public boolean jms2Client() { return true; }

    /** Qpid JMS's JmsSession.INDIVIDUAL_ACKNOWLEDGE (private there; the value Artemis's client uses too). */
    @Override
    public int individualAcknowledgeMode() { return 101; }

    @Override
    public Object receiveBody(MessageConsumer c, Class<?> type, long timeoutMs) throws JMSException {
        return ((JmsMessageConsumer) c).receiveBody(type, timeoutMs);
    }

    /**
     * Qpid JMS's receiveNoWait asks the peer for more (a drain) whenever its prefetch is empty,
     * a round trip that also uses up the consumer's credit; the rest of a batch takes only what
     * has arrived. The flag is the connection's and read at each receive: it is set only for
     * this call (a pyjms context's session is used by one thread at a time, as JMS requires).
     */
    @Override
    public Message receiveBuffered(Connection c, MessageConsumer consumer) throws JMSException {
        if (!(c instanceof JmsConnection connection) || connection.isReceiveNoWaitLocalOnly()) {
            return consumer.receiveNoWait();
        }
        connection.setReceiveNoWaitLocalOnly(true);
        try {
            return consumer.receiveNoWait();
        } finally {
            connection.setReceiveNoWaitLocalOnly(false);
        }
    }

    /** Qpid JMS's browse waits 60 s on a drain its peer left unanswered: see ResumingBrowse. */
    @Override
    public org.pyjms.shim.BrowseCursor browse(org.pyjms.shim.BrowseCursor.Opener opener) throws JMSException {
        return new ResumingBrowse(opener);
    }

    /** Qpid JMS stamps JMSDeliveryTime and sends it as the x-opt-delivery-time annotation. */
    @Override
    public boolean carriesDeliveryTime() { return true; }

    @Override
    public String peerLacksSharedSubscriptions(Connection c) {
        AmqpPeer peer = AmqpPeer.of(c);
        if (peer.sharedSubscriptions()) return null;
        return "the AMQP peer (" + peer.describe() + ") does not offer shared subscriptions (no "
                + AmqpPeer.SHARED_SUBS + " capability); JMS 2.0 shared subscriptions over AMQP need a broker "
                + "that offers them, such as Apache Artemis";
    }

}
