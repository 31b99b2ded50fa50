package org.pyjms.shim;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Queue;

/** A consumer whose messages cross to Python as encoded records. */
public final class Receiver implements AutoCloseable {
    private final Channel channel;
    private final MessageConsumer consumer;
    private final int id;
    private final Queue emulatedSubscription; // shared non-durable: removed when its last consumer goes

    Receiver(Channel channel, MessageConsumer consumer, int id, Queue emulatedSubscription) {
        this.channel = channel;
        this.consumer = consumer;
        this.id = id;
        this.emulatedSubscription = emulatedSubscription;
    }

    public int id() { return id; }

    /** The provider's consumer, for shim extensions that receive on their own (org.pyjms.shim.delay). */
    public MessageConsumer jmsConsumer() { return consumer; }

    /**
     * The next unexpired message. A scheduler may deliver a message a little after the exact
     * expiration pyjms recorded at send; such a message is discarded here, never returned (E03).
     * Poison (org.pyjms.shim.Poison) is quarantined here, never returned either.
     */
    private Message next(long timeoutMs) throws JMSException {
        // timeoutMs < 0 (BUFFERED): only what the client holds already, never a question to the broker
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (true) {
            Message m = timeoutMs > 0 ? consumer.receive(Math.max(1, deadline - System.currentTimeMillis()))
                    : timeoutMs == 0 ? consumer.receiveNoWait()
                    : channel.provider().receiveBuffered(channel.connection(), consumer);
            if (m == null) return null;
            Codec.PropertyNames names = Codec.PropertyNames.of(m);
            String[] poison = Poison.problem(m, names);
            if (poison != null) {
                // never handed over, never lost: to the dead-letter queue, then acknowledged as
                // any other (in a transacted session both are part of the transaction)
                Poison.quarantine(channel, m, poison);
            } else if (!expired(m, names)) {
                nextNames = names;
                return m;
            }
            channel.acknowledgeUnhanded(m);
            if (timeoutMs > 0 && System.currentTimeMillis() >= deadline) return null;
        }
    }

    /** The property names of the message next() returned last, for its record. */
    private Codec.PropertyNames nextNames;

    /** next()'s timeout for the rest of a batch: see Provider.receiveBuffered. */
    private static final long BUFFERED = -1;

    /** expired(m) with m's property names read already: the exact expiration is a pyjms property. */
    static boolean expired(Message m, Codec.PropertyNames names) throws JMSException {
        return names.reserved() && expired(m);
    }

    static boolean expired(Message m) throws JMSException {
        long expiration = Poison.time(m, Channel.EXPIRATION, 0);
        return expiration != 0 && System.currentTimeMillis() >= expiration;
    }

    /** A record too large for the caller's area, until Python takes it. */
    private byte[] oversize;

    /**
     * One message as a record, written to the start of {@code area} (a direct buffer over a
     * Python bytearray: no byte[] is made to cross per message); returns its length, -1 when
     * none came, or -2 when the record did not fit (then {@link #takeOversize} has it).
     * timeoutMs <= 0 does not wait. With ack false an auto-acknowledge context leaves the
     * message unacknowledged (see ackLast / Channel.recover).
     */
    public int receiveToArea(java.nio.ByteBuffer area, long timeoutMs, boolean ack) throws JMSException {
        channel.checkOpen();
        long deadline = System.currentTimeMillis() + timeoutMs;
        Codec.Out out;
        while (true) {
            Message m = next(timeoutMs);
            if (m == null) return -1;
            channel.consumed(m);
            out = new Codec.Out(256);
            Codec.encode(m, out, nextNames);
            if (!ack || !channel.ackInShim || channel.acknowledgeInShim(m)) break;
            // a failover rolled its acknowledgement back: it comes again (Channel.acknowledgeInShim)
            if (timeoutMs <= 0 || (timeoutMs = deadline - System.currentTimeMillis()) <= 0) return -1;
        }
        int n = out.copyTo(area);
        if (n < 0) {
            oversize = out.toByteArray();
            return -2;
        }
        return n;
    }

    public byte[] takeOversize() {
        byte[] b = oversize;
        oversize = null;
        return b;
    }

    /**
     * The client's own JMS 2.0 receiveBody (Provider.jms2Client): the next message's body as a
     * body-only record of the given kind (text, bytes, map; KIND_MESSAGE: whatever body it has),
     * or null when none came or the message has no body. timeoutMs <= 0 does not wait.
     */
    public byte[] receiveBody(byte kind, long timeoutMs) throws JMSException {
        channel.checkOpen();
        Class<?> type = switch (kind) {
            case Codec.KIND_TEXT -> String.class;
            case Codec.KIND_BYTES -> byte[].class;
            case Codec.KIND_MAP -> java.util.Map.class;
            default -> Object.class;
        };
        Object body = channel.provider().receiveBody(consumer, type, Math.max(0, timeoutMs));
        if (body == null) return null;
        Codec.Out out = new Codec.Out(256);
        Codec.encodeBody(body, out);
        return out.toByteArray();
    }

    /** Acknowledges what an auto-acknowledge context received with ack = false. */
    public void ackLast() throws JMSException {
        Message m = channel.lastConsumed;
        if (channel.ackInShim && m != null) m.acknowledge();
    }

    /**
     * Up to max messages as one packed batch (int count, then records): waits up to timeoutMs
     * for the first, then takes only what is already available.
     */
    public byte[] receiveBatch(int max, long timeoutMs) throws JMSException {
        channel.checkOpen();
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (true) {
            Codec.Out out = new Codec.Out(8192);
            int countAt = out.reserveInt();
            int n = 0;
            Message last = null;
            Message m = next(timeoutMs);
            while (m != null) {
                Codec.encode(m, out, nextNames);
                last = m;
                if (channel.individual) channel.consumed(m); // each is acknowledged on its own
                if (++n >= max) break;
                m = next(BUFFERED);
            }
            out.patchInt(countAt, n);
            if (last == null) return out.toByteArray();
            channel.lastConsumed = last;
            if (!channel.ackInShim || channel.acknowledgeInShim(last)) return out.toByteArray();
            // a failover rolled the batch's acknowledgement back: it comes again (Channel.acknowledgeInShim)
            if (timeoutMs <= 0 || (timeoutMs = deadline - System.currentTimeMillis()) <= 0) return new byte[4];
        }
    }

    /** Delivers asynchronously through Channel.nextListened / listenedDone. */
    public void listen() throws JMSException {
        channel.checkOpen();
        consumer.setMessageListener(m -> channel.deliver(id, m));
    }

    /** Back to synchronous receives. */
    public void unlisten() throws JMSException {
        consumer.setMessageListener(null);
    }

    @Override
    public void close() throws JMSException {
        consumer.close();
        if (emulatedSubscription != null) {
            channel.provider().deleteIfUnused(channel.connection(), emulatedSubscription);
        }
    }
}
