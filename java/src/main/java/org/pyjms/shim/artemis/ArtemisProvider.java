package org.pyjms.shim.artemis;

import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.Destination;
import java.util.Map;
import org.apache.activemq.artemis.api.core.ActiveMQException;
import org.apache.activemq.artemis.api.core.ActiveMQQueueExistsException;
import org.apache.activemq.artemis.api.core.SimpleString;
import org.apache.activemq.artemis.api.core.client.ClientSession;
import org.apache.activemq.artemis.core.version.impl.VersionImpl;
import org.apache.activemq.artemis.jms.client.ActiveMQConnection;
import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;
import org.apache.activemq.artemis.jms.client.ActiveMQDestination;
import org.apache.activemq.artemis.utils.SelectorTranslator;
import org.apache.activemq.artemis.utils.VersionLoader;
import org.pyjms.shim.Contract;
import org.pyjms.shim.Provider;
import org.pyjms.shim.Providers;

/**
 * Apache Artemis through its own Jakarta client, which has every JMS 2.0 feature pyjms needs
 * natively: delivery delay, async send, shared subscriptions. So nothing here is emulated;
 * only temporary destinations need help crossing the boundary by name.
 */
public final class ArtemisProvider implements Provider {
    private static final String CONFIRMATION_WINDOW = "confirmationWindowSize";
    private static final String PRODUCER_WINDOW = "producerWindowSize";

    @Override
    public String name() {
        return "Apache Artemis " + VersionLoader.getVersion().getFullVersion();
    }

    /** Artemis closes a failed connection's sessions (and their producers) before it tells the
     *  exception listener, from another thread: a call in between sees "Producer is closed". */
    @Override
    public boolean connectionLost(Connection c) {
        if (!(c instanceof ActiveMQConnection a)) return false;
        var sessions = a.getSessionFactory();
        // a factory the user closed is closed; one whose connection failed is not, and has none
        return sessions != null && !sessions.isClosed() && sessions.getConnection() == null;
    }

    /**
     * Artemis's core client creates an auto-created queue itself: its createBrowser looks the
     * queue up, then creates it if it was not there. A queue that another client created in
     * between (or re-created, after the broker auto-deleted it when its last consumer left)
     * fails the browser with AMQ229019, "already exists". Seen in a test run on a loaded
     * machine, browsing a staging queue whose delay processor was re-opening its consumer.
     */
    @Override
    public boolean createdMeanwhile(jakarta.jms.JMSException e) {
        return e.getLinkedException() instanceof ActiveMQQueueExistsException
                || e.getCause() instanceof ActiveMQQueueExistsException;
    }

    @Override
    public int individualAcknowledgeMode() {
        return org.apache.activemq.artemis.api.jms.ActiveMQJMSConstants.INDIVIDUAL_ACKNOWLEDGE;
    }

    /**
     * A message's acknowledge() in Artemis's individual mode acknowledges it and commits the
     * core session's acknowledgements: here each is acknowledged and one commit covers them.
     */
    @Override
    public void acknowledgeEach(jakarta.jms.Session session, java.util.List<jakarta.jms.Message> messages)
            throws jakarta.jms.JMSException {
        if (!(session instanceof org.apache.activemq.artemis.jms.client.ActiveMQSession s)) {
            Provider.super.acknowledgeEach(session, messages);
            return;
        }
        ClientSession core = s.getCoreSession();
        try {
            for (jakarta.jms.Message m : messages) {
                ((org.apache.activemq.artemis.jms.client.ActiveMQMessage) m).getCoreMessage().individualAcknowledge();
            }
            core.commit(core.isBlockOnAcknowledge());
        } catch (ActiveMQException e) {
            jakarta.jms.JMSException j = new jakarta.jms.JMSException(e.getMessage());
            j.setLinkedException(e);
            j.initCause(e);
            throw j;
        }
    }

    /** url: an Artemis client URL (tcp://host:port, vm://N, (tcp://a,tcp://b)?ha=true...). */
    @Override
    public ConnectionFactory factory(String url, Map<String, String> properties) throws Exception {
        // no URL: the properties name it (brokerURL), as for any factory class
        ActiveMQConnectionFactory f = url == null || url.isEmpty() ? new ActiveMQConnectionFactory() : new ActiveMQConnectionFactory(url);
        // pyjms never deserializes an ObjectMessage body; the client may not either
        f.setDeserializationDenyList("*");
        // an async send completes when the broker confirms it, so a refused put reaches the
        // CompletionListener; without a window the client completes it once written (-1)
        if (Providers.unset(url, properties, CONFIRMATION_WINDOW, CONFIRMATION_WINDOW)) {
            f.setConfirmationWindowSize(1024 * 1024);
        }
        // a producer asks the broker for credits a window at a time; with the client's 64 KiB
        // (a few hundred small messages) a fast producer waits for credits: with 1 MiB the
        // bench's batches and per-message sends of 100-byte messages ran 10-35% faster
        // (docs/providers.md). A full broker still holds producers back: it grants no credits.
        if (Providers.unset(url, properties, PRODUCER_WINDOW, PRODUCER_WINDOW)) {
            f.setProducerWindowSize(1024 * 1024);
        }
        for (Map.Entry<String, String> e : properties.entrySet()) Providers.setProperty(f, e.getKey(), e.getValue());
        // ... yet the broker answers only the sends someone waits for, and a failover waits 2 s at
        // most for the broker it reached to answer its check (CoreProtocol), unless the URL or the
        // properties chose the client's protocol manager
        if (f.getProtocolManagerFactoryStr() == null) f.getServerLocator().setProtocolManagerFactory(new CoreProtocol());
        return f;
    }

    /** A batch call's non-blocking sends are written to the socket together (BatchWrites). */
    @Override
    public Runnable holdWrites(jakarta.jms.Session session) {
        return BatchWrites.start();
    }

    @Override
    public Destination temporary(String key) {
        if (key.startsWith("temp-queue://")) return ActiveMQDestination.createTemporaryQueue(key.substring(13));
        if (key.startsWith("temp-topic://")) return ActiveMQDestination.createTemporaryTopic(key.substring(13));
        return null;
    }

    /** Artemis's client refuses any other client's destination ("Foreign destination"), as a
     *  temporary queue of a Qpid JMS connection in this JVM is (a request over AMQP to a service
     *  of an embedded broker): it gets one of its own by name from {@link #temporary}. */
    @Override
    public boolean takes(Destination d) { return d instanceof ActiveMQDestination; }

    /** Artemis's client sends async, completing when the broker confirms (see factory). Its
     *  receiveBody consumes a message it cannot convert, so it is no {@link #jms2Client}: the
     *  shim keeps such a message, and redelivers for a failed listener, itself. */
    @Override
    public boolean sendsAsync() { return true; }

    /** The broker drops a message whose _AMQ_DUPL_ID it has taken (its id cache, per address). */
    @Override
    public boolean peerDetectsDuplicates(Connection c) { return true; }

    /** setDeliveryDelay stamps JMSDeliveryTime, and the core protocol carries it
     *  (_AMQ_SCHED_DELIVERY). */
    @Override
    public boolean carriesDeliveryTime() { return true; }

    /** A JMS selector as Artemis keeps it, as a subscription queue's filter (its client translates
     *  header names: JMSPriority is AMQPriority there). */
    public static String storedFilter(String selector) {
        return SelectorTranslator.convertToActiveMQFilterString(selector);
    }

    /**
     * A pyjms Artemis broker is known by its admin service's queue, PYJMS.ADMIN, which it
     * configures at start (a stock broker has none, or one auto-created by a client's request),
     * asked with a core queue query on the connection's own signed-in session: no message, no wait.
     */
    @Override
    public boolean isPyjmsBroker(Connection c) {
        if (!(c instanceof ActiveMQConnection)) return false;
        ClientSession session = ((ActiveMQConnection) c).getInitialSession();
        if (session == null) return false;
        try {
            ClientSession.QueueQuery q = session.queueQuery(SimpleString.of(Contract.ADMIN_QUEUE));
            return q.isExists() && !q.isAutoCreated();
        } catch (ActiveMQException e) {
            return false;
        }
    }
}
