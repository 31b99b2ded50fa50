package org.pyjms.shim.delay;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.pyjms.shim.Channel;
import org.pyjms.shim.Codec;
import org.pyjms.shim.Poison;
import org.pyjms.shim.Receiver;

/**
 * The delay processor's deliverer step for one chunk of a due time slot
 * (pyjms.delay.processor_deliverer), done in the shim so that plain deliveries do not cross
 * into Python. Plain JMS: it works on any provider.
 */
public final class DueMover {
    /** In a plain answer, the entry of a poison message put on the dead-letter queue instead. */
    public static final int QUARANTINED = Integer.MIN_VALUE;
    /** The key of a (user, target) pair the processor found the user may write to. */
    public static String pair(String user, String target) {
        return (user == null ? "" : "u:" + user) + "\n" + target;
    }

    private final Channel channel;
    private final int mostAttempts;
    /** Its own producer on the channel's session: the channel's one is configured per send. */
    private MessageProducer producer;

    /** A message delivered more than mostAttempts times is quarantined (Poison.quarantineStaged). */
    /** The next message the client holds already, or null (Provider.receiveBuffered). */
    private Message buffered(MessageConsumer consumer) throws JMSException {
        return channel.provider().receiveBuffered(channel.connection(), consumer);
    }

    public DueMover(Channel channel, int mostAttempts) {
        this.channel = channel;
        this.mostAttempts = mostAttempts;
    }

    /**
     * Receives up to max messages of a slot's receiver (waiting up to timeoutMs for the first;
     * 0: only what is already here) and orders them by delivery time. If each one goes to a
     * target in {@code plainTargets} (targets Python found no rules for), has not expired and
     * has a body pyjms copies, each is sent on the channel's (transacted) session to its target
     * as the processor's Python side would: without the staging header, with the sender's
     * correlation id back, with the exact expiration as JMS_PYJMS_Expiration and the time left
     * as TTL, its own priority and delivery mode. The answer is then int n, then n ints: the
     * delivery time minus now of each (negative: on time), or QUARANTINED for a poison message
     * (org.pyjms.shim.Poison) put on the channel's dead-letter queue. Otherwise nothing is sent and the
     * answer is int -n, then n records in delivery-time order, for Python to handle (poison is
     * quarantined either way, in the chunk's transaction). With {@code allowed} (not null) a
     * message is plain only if the pair of the user who staged it (JMSXUserID) and its target
     * is in it too ({@link #pair}): Python checks the others' right to write there.
     */
    public byte[] deliverDue(Receiver from, int max, long timeoutMs, Set<String> plainTargets, Set<String> allowed)
            throws JMSException {
        channel.checkOpen();
        MessageConsumer consumer = from.jmsConsumer();
        List<Message> got = new ArrayList<>();
        int quarantined = 0;
        // what the client holds already, never a question to the broker (Provider.receiveBuffered:
        // Qpid JMS's receiveNoWait drains the link, and Artemis may drop a drain that follows
        // another closely, leaving the client waiting for its answer)
        Message m = timeoutMs > 0 ? consumer.receive(timeoutMs) : buffered(consumer);
        while (m != null) {
            if (Poison.quarantineStaged(channel, m, mostAttempts)) { // in this chunk's transaction
                quarantined++;
            } else {
                got.add(m);
            }
            if (got.size() + quarantined >= max) break;
            m = buffered(consumer);
        }
        Integer[] order = new Integer[got.size()];
        long[] due = new long[got.size()];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
            Message g = got.get(i);
            due[i] = Poison.time(g, Channel.DELIVERY_TIME, 0);
        }
        Arrays.sort(order, (a, b) -> Long.compare(due[a], due[b])); // stable
        long now = System.currentTimeMillis();
        boolean plain = true;
        for (Message g : got) {
            byte kind = Codec.kindOf(g);
            String target = g.getStringProperty(StagingHeader.TARGET);
            long expiration = expiration(g);
            if (target == null || !plainTargets.contains(target) || (expiration != 0 && now >= expiration)
                    || kind == Codec.KIND_OBJECT || kind == Codec.KIND_STREAM
                    || (allowed != null && !allowed.contains(pair(user(g), target)))) {
                plain = false;
                break;
            }
        }
        Codec.Out out = new Codec.Out(plain ? 4 + 4 * (order.length + quarantined) : 8192);
        if (!plain) {
            out.putInt(-order.length);
            for (Integer i : order) Codec.encode(got.get(i), out);
            return out.toByteArray();
        }
        if (producer == null && order.length > 0) producer = channel.session().createProducer(null);
        out.putInt(order.length + quarantined);
        for (Integer i : order) {
            Message g = got.get(i);
            long at = send(g);
            out.putInt((int) Math.max(Integer.MIN_VALUE + 1, Math.min(Integer.MAX_VALUE, due[i] - at)));
        }
        for (int q = 0; q < quarantined; q++) out.putInt(QUARANTINED);
        return out.toByteArray();
    }

    /** Who staged a slot queue's message (SlotFiler.stagedBy), null for none. */
    private static String user(Message g) throws JMSException {
        Object user = g.getObjectProperty(StagingHeader.USER);
        return user instanceof String u && !u.isEmpty() ? u : null;
    }

    private static long expiration(Message g) {
        return Poison.time(g, StagingHeader.EXPIRATION, 0);
    }

    /** Sends a delivered copy of a staged message to its target; returns the time it was sent. */
    private long send(Message g) throws JMSException {
        long expiration = expiration(g);
        Message c = Codec.copy(g, channel.session());
        c.clearProperties();
        for (java.util.Map.Entry<String, Object> e : Codec.properties(g).entrySet()) {
            if (!StagingHeader.contains(e.getKey())) c.setObjectProperty(e.getKey(), e.getValue());
        }
        c.setJMSCorrelationID(g.getStringProperty(StagingHeader.CORRELATION_ID));
        long at = System.currentTimeMillis();
        long ttl = 0;
        if (expiration != 0) {
            c.setLongProperty(Channel.EXPIRATION, expiration);
            ttl = Math.max(1, expiration - at);
        }
        producer.send(channel.destinations().resolve(g.getStringProperty(StagingHeader.TARGET)), c,
                g.getJMSDeliveryMode(), g.getJMSPriority(), ttl);
        return at;
    }
}
