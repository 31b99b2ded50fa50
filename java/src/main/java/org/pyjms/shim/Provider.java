package org.pyjms.shim;

import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.Destination;
import jakarta.jms.JMSException;
import jakarta.jms.Queue;
import java.util.Map;

/** What the shim needs from a provider beyond the Jakarta Messaging API. */
public interface Provider {
    /** A short name used in error messages, e.g. "ActiveMQ Classic". */
    String name();

    ConnectionFactory factory(String url, Map<String, String> properties) throws Exception;

    /** A temporary destination from its key, or null when the provider cannot tell. */
    default Destination temporary(String key) { return null; }

    /**
     * Whether this provider's client takes {@code d}, a temporary destination that some client
     * in this JVM made or received under that key. Another provider's client may have made it (a
     * Qpid JMS requester beside a broker whose services answer through Artemis's client): a
     * client that refuses foreign destinations says false, and the shim then asks
     * {@link #temporary} for one of its own.
     */
    default boolean takes(Destination d) { return true; }

    /**
     * Starts one of the shim's batch calls on {@code session}: what it sends until the returned
     * Runnable runs may be written to the wire together, and is on its way once that has run
     * (the shim runs it in a finally). The default writes as the client does.
     */
    default Runnable holdWrites(jakarta.jms.Session session) { return NOTHING_HELD; }

    /** {@link #holdWrites}'s default. */
    Runnable NOTHING_HELD = () -> {};

    /**
     * Waits, briefly, until this session's connection knows of another connection's temporary
     * destination (a reply-to it was just handed), where its client learns of them
     * asynchronously and refuses sends to one it has not heard of yet.
     */
    default void awaitKnown(jakarta.jms.Session session, Destination temporary) {}

    /**
     * The client's session mode in which a message's acknowledge() acknowledges that message
     * only (ActiveMQ Classic's, Artemis's and Qpid JMS's INDIVIDUAL_ACKNOWLEDGE), or -1 where it
     * has none: what a Channel opened in {@link Contract#INDIVIDUAL_ACKNOWLEDGE} runs on.
     */
    default int individualAcknowledgeMode() { return -1; }

    /** Acknowledges each of these messages, consumed by {@code session} in its individual acknowledge mode. */
    default void acknowledgeEach(jakarta.jms.Session session, java.util.List<jakarta.jms.Message> messages)
            throws JMSException {
        for (jakarta.jms.Message m : messages) m.acknowledge();
    }

    /**
     * Whether the broker is one pyjms started, which stages delayed publications one copy per
     * subscriber (see activemq.DelayedPublications).
     */
    default boolean isPyjmsBroker(Connection c) { return false; }

    /**
     * Whether the client already knows that its connection failed, before its exception
     * listener is told (that comes later, on another thread). A commit made then never leaves.
     */
    default boolean connectionLost(Connection c) { return false; }

    /**
     * Whether the broker drops a message whose duplicate-detection id (Artemis's _AMQ_DUPL_ID
     * property) it has already taken; where it does not, pyjms's receivers drop such messages.
     */
    default boolean peerDetectsDuplicates(Connection c) { return false; }

    /** The broker product the connection's peer names itself, where the protocol says (AMQP's
     *  "product" connection property); null where it does not. */
    default String peerProduct(Connection c) { return null; }

    /** Whether shared subscriptions can be emulated on this connection (see SharedSubscriptions). */
    default boolean virtualizesTopic(Connection c, String topic) { return false; }

    /**
     * Marks a message for the broker's own scheduler and returns the time-to-live to send it
     * with, so that it expires at send time + ttl (JMS 2.0) whatever the scheduler does.
     */
    default long schedule(jakarta.jms.Message m, long delayMs, long ttl) throws JMSException {
        throw new UnsupportedOperationException(name() + " has no broker scheduler");
    }

    /**
     * Whether the broker honours the client's own JMS 2.0 delivery delay, for a client that has
     * one (an AMQP peer must offer DELAYED_DELIVERY; Qpid JMS refuses delayed sends otherwise).
     */
    default boolean peerDelaysDelivery(Connection c) { return true; }

    /**
     * Whether that claim is known to hold without a probe (false: pyjms tries a delayed message
     * first). ActiveMQ Classic's AMQP connector offers DELAYED_DELIVERY even with its scheduler
     * off, and then delivers delayed messages at once.
     */
    default boolean peerDelayKnown(Connection c) { return true; }

    /**
     * Whether the broker restamps a message it delayed for the client's own delivery delay when
     * it delivers it (a new JMSTimestamp, the time-to-live counted again from there), as ActiveMQ
     * Classic's scheduler does behind its AMQP connector. The shim then keeps the send time and
     * the exact expiration in properties and sends the TTL left after the delay, as it does for
     * a scheduler.
     */
    default boolean peerRestampsDelayed(Connection c) { return false; }

    /**
     * Whether the client sets JMSDeliveryTime on a message it delays itself, and its wire carries
     * it to receivers (AMQP's x-opt-delivery-time), so that the shim need not record it.
     */
    default boolean carriesDeliveryTime() { return false; }

    /**
     * Why this connection can have no JMS 2.0 shared subscriptions, naming the peer, or null when
     * the client may create them (or the shim emulate them, see SharedSubscriptions).
     */
    default String peerLacksSharedSubscriptions(Connection c) { return null; }

    /**
     * Whether the client implements JMS 2.0's session features itself: sends with a
     * CompletionListener, {@link #receiveBody}, and redelivering the message of a listener that
     * failed in AUTO_ACKNOWLEDGE mode. The shim then leaves them to it rather than emulating them
     * (see Channel: an auto-acknowledge context then runs on an AUTO_ACKNOWLEDGE session).
     */
    default boolean jms2Client() { return false; }

    /**
     * Whether the client sends with a CompletionListener itself (every {@link #jms2Client} does).
     * A client may have async send but not a receiveBody that leaves an unconvertible message
     * (Artemis's consumes it): the shim then emulates receiveBody and listener redelivery only.
     */
    default boolean sendsAsync() { return jms2Client(); }

    /**
     * JMS 2.0's receiveBody on a consumer of this provider's client (the Jakarta API has it on
     * JMSConsumer only): the next message's body as {@code type}, or null; a body that cannot be
     * returned as {@code type} is a MessageFormatException and, in AUTO_ACKNOWLEDGE and
     * DUPS_OK_ACKNOWLEDGE sessions, stays unconsumed. timeoutMs: 0 does not wait, < 0 waits.
     */
    default Object receiveBody(jakarta.jms.MessageConsumer c, Class<?> type, long timeoutMs) throws JMSException {
        throw new UnsupportedOperationException(name() + " has no receiveBody");
    }

    /**
     * The next message the client already holds, or null, without asking the broker: how a
     * batch takes the rest of what has arrived once its first message came. The default is
     * receiveNoWait, which is local for most clients.
     */
    default jakarta.jms.Message receiveBuffered(Connection c, jakarta.jms.MessageConsumer consumer)
            throws JMSException {
        return consumer.receiveNoWait();
    }

    /**
     * Whether {@code e}, from creating a browser, says that another client created the queue
     * between this client's look for it and its own create. The call is then made once more,
     * and finds the queue. The default is false: the brokers create queues themselves.
     */
    default boolean createdMeanwhile(JMSException e) { return false; }

    /**
     * A pass over a queue, through browsers that {@code opener} makes (it makes the first one
     * now, so that a bad queue or selector fails here). The default reads the first browser's
     * own enumeration; a provider whose browse can stall or end early opens another and goes on
     * from there.
     */
    default BrowseCursor browse(BrowseCursor.Opener opener) throws JMSException {
        return BrowseCursor.of(opener.open());
    }

    /** Whether the broker behind this connection is known to run the scheduler (false = unknown). */
    default boolean schedulerKnownOn(Connection c) { return false; }

    /**
     * The destination to give a consumer that should be sent at most {@code prefetch} messages
     * ahead of its receives (0: only when asked). Gets by message token use it: such a consumer
     * selects exactly the messages it wants, so it may take them all at once, and closing it
     * hands back at most what it was sent. The default is the destination itself.
     */
    default Destination prefetching(Destination d, int prefetch) { return d; }

    /**
     * The queue to give a browser that will be read in batches of {@code ahead} messages: one
     * the broker may send at least that many messages ahead of the reads, so that it keeps
     * sending while the caller takes a batch (the Spark reader's browse). Never fewer ahead than
     * the connection is configured for. The default is the queue itself.
     */
    default Destination browsing(Connection c, Destination d, int ahead) { return d; }

    /** Deletes a queue if nobody consumes from it; false when not possible. */
    default boolean deleteIfUnused(Connection c, Queue q) throws JMSException { return false; }

    /**
     * The names of the queues on the broker now whose names start with prefix, one per line,
     * or null when the provider cannot list them (the delay processor then finds its slot
     * queues by their markers alone). May wait up to waitMs for the broker's answer.
     */
    default String queueNames(Connection c, String prefix, long waitMs) throws JMSException { return null; }
}
