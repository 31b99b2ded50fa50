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

    /**
     * The next unexpired message. A scheduler may deliver a message a little after the exact
     * expiration pyjms recorded at send; such a message is discarded here, never returned (E03).
     */
    private Message next(long timeoutMs) throws JMSException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (true) {
            Message m = timeoutMs > 0 ? consumer.receive(Math.max(1, deadline - System.currentTimeMillis()))
                    : consumer.receiveNoWait();
            if (m == null || !expired(m)) return m;
            if (channel.ackInShim) m.acknowledge();
            if (timeoutMs > 0 && System.currentTimeMillis() >= deadline) return null;
        }
    }

    static boolean expired(Message m) throws JMSException {
        if (!m.propertyExists(Channel.EXPIRATION)) return false;
        return System.currentTimeMillis() >= m.getLongProperty(Channel.EXPIRATION);
    }

    /**
     * One message as a record, or null. timeoutMs <= 0 does not wait. With ack false an
     * auto-acknowledge context leaves the message unacknowledged (see ackLast / Channel.recover).
     */
    public byte[] receive(long timeoutMs, boolean ack) throws JMSException {
        channel.checkOpen();
        Message m = next(timeoutMs);
        if (m == null) return null;
        channel.lastConsumed = m;
        Codec.Out out = new Codec.Out(256);
        Codec.encode(m, out);
        if (ack && channel.ackInShim) m.acknowledge();
        return out.toByteArray();
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
        Codec.Out out = new Codec.Out(8192);
        int countAt = out.reserveInt();
        int n = 0;
        Message last = null;
        Message m = next(timeoutMs);
        while (m != null) {
            Codec.encode(m, out);
            last = m;
            if (++n >= max) break;
            m = next(0);
        }
        out.patchInt(countAt, n);
        if (last != null) {
            channel.lastConsumed = last;
            if (channel.ackInShim) last.acknowledge();
        }
        return out.toByteArray();
    }

    /**
     * The delay processor's filing step, done here so that staged messages do not cross into
     * Python: each message received (up to max, waiting up to timeoutMs for the first) whose
     * delivery time is at least horizonMs away is sent unchanged, with no TTL, to the queue
     * slotPrefix + (deliveryTime / slotMs) + "." + suffix on this (transacted) session. Returns
     * int n, then n pairs (long slot, int count); then int m and m records of the messages due
     * sooner, which Python handles itself.
     */
    public byte[] fileBySlot(int max, long timeoutMs, long slotMs, long horizonMs, String slotPrefix, String suffix)
            throws JMSException {
        channel.checkOpen();
        java.util.Map<Long, Integer> filed = new java.util.LinkedHashMap<>();
        java.util.List<Message> soon = new java.util.ArrayList<>();
        Message m = consumer.receive(Math.max(1, timeoutMs));
        int n = 0;
        while (m != null) {
            long due = m.propertyExists(Channel.DELIVERY_TIME) ? m.getLongProperty(Channel.DELIVERY_TIME) : 0;
            if (due - System.currentTimeMillis() < horizonMs) {
                soon.add(m);
            } else {
                long slot = due / slotMs;
                channel.forward(slotPrefix + slot + "." + suffix, m);
                filed.merge(slot, 1, Integer::sum);
            }
            if (++n >= max) break;
            m = consumer.receiveNoWait();
        }
        Codec.Out out = new Codec.Out(1024);
        out.putInt(filed.size());
        for (java.util.Map.Entry<Long, Integer> e : filed.entrySet()) {
            out.putLong(e.getKey());
            out.putInt(e.getValue());
        }
        out.putInt(soon.size());
        for (Message s : soon) Codec.encode(s, out);
        return out.toByteArray();
    }

    /** The staging header (pyjms.delay.staging): dropped when a staged message is delivered. */
    private static final String DDL_TARGET = "JMS_PYJMS_DDL_Target", DDL_CORRELATION_ID = "JMS_PYJMS_DDL_CorrelationID",
            DDL_EXPIRATION = "JMS_PYJMS_DDL_Expiration";
    private jakarta.jms.MessageProducer mover; // deliverDue's producer, on the channel's session

    /**
     * The delay processor's delivery step for one chunk of a due time slot, done here so that
     * plain deliveries do not cross into Python. Receives up to max messages (waiting up to
     * timeoutMs for the first; 0: only what is already here) and orders them by delivery time.
     * If each one goes to a target in {@code plainTargets} (targets Python found no rules
     * for), has not expired and has a body pyjms copies, each is sent on this (transacted) session to its target as the
     * processor's Python side would: without the staging header, with the sender's
     * correlation id back, with the exact expiration as JMS_PYJMS_Expiration and the time
     * left as TTL, its own priority and delivery mode. The answer is then int n, then n ints:
     * the delivery time minus now of each (negative: on time). Otherwise nothing is sent and
     * the answer is int -n, then n records in delivery-time order, for Python to handle.
     */
    public byte[] deliverDue(int max, long timeoutMs, java.util.Set<String> plainTargets) throws JMSException {
        channel.checkOpen();
        java.util.List<Message> got = new java.util.ArrayList<>();
        Message m = timeoutMs > 0 ? consumer.receive(timeoutMs) : consumer.receiveNoWait();
        while (m != null) {
            got.add(m);
            if (got.size() >= max) break;
            m = consumer.receiveNoWait();
        }
        Integer[] order = new Integer[got.size()];
        long[] due = new long[got.size()];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
            Message g = got.get(i);
            due[i] = g.propertyExists(Channel.DELIVERY_TIME) ? g.getLongProperty(Channel.DELIVERY_TIME) : 0;
        }
        java.util.Arrays.sort(order, (a, b) -> Long.compare(due[a], due[b])); // stable
        long now = System.currentTimeMillis();
        boolean plain = true;
        for (Message g : got) {
            byte kind = Codec.kindOf(g);
            String target = g.getStringProperty(DDL_TARGET);
            long expiration = g.propertyExists(DDL_EXPIRATION) ? g.getLongProperty(DDL_EXPIRATION) : 0;
            if (target == null || !plainTargets.contains(target) || (expiration != 0 && now >= expiration)
                    || kind == Codec.KIND_OBJECT || kind == Codec.KIND_STREAM) {
                plain = false;
                break;
            }
        }
        Codec.Out out = new Codec.Out(plain ? 4 + 4 * order.length : 8192);
        if (!plain) {
            out.putInt(-order.length);
            for (Integer i : order) Codec.encode(got.get(i), out);
            return out.toByteArray();
        }
        if (mover == null && order.length > 0) mover = channel.session().createProducer(null);
        out.putInt(order.length);
        for (Integer i : order) {
            Message g = got.get(i);
            long expiration = g.propertyExists(DDL_EXPIRATION) ? g.getLongProperty(DDL_EXPIRATION) : 0;
            Message c = Codec.copy(g, channel.session());
            c.clearProperties();
            for (java.util.Enumeration<?> e = g.getPropertyNames(); e.hasMoreElements(); ) {
                String name = (String) e.nextElement();
                if (name.startsWith("JMSX") || name.equals(DDL_TARGET) || name.equals(DDL_CORRELATION_ID)
                        || name.equals(DDL_EXPIRATION)) continue;
                Object v = g.getObjectProperty(name);
                if (v != null) c.setObjectProperty(name, v);
            }
            c.setJMSCorrelationID(g.getStringProperty(DDL_CORRELATION_ID));
            long at = System.currentTimeMillis();
            long ttl = 0;
            if (expiration != 0) {
                c.setLongProperty(Channel.EXPIRATION, expiration);
                ttl = Math.max(1, expiration - at);
            }
            mover.send(channel.destinations.resolve(g.getStringProperty(DDL_TARGET)), c, g.getJMSDeliveryMode(),
                    g.getJMSPriority(), ttl);
            out.putInt((int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, due[i] - at)));
        }
        return out.toByteArray();
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
        if (mover != null) mover.close();
        consumer.close();
        if (emulatedSubscription != null) {
            channel.provider().deleteIfUnused(channel.connection(), emulatedSubscription);
        }
    }
}
