package org.pyjms.shim;

import jakarta.jms.Destination;
import jakarta.jms.InvalidDestinationException;
import jakarta.jms.JMSException;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TemporaryQueue;
import jakarta.jms.TemporaryTopic;
import jakarta.jms.Topic;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Destinations cross the boundary as keys: queue://NAME, topic://NAME, temp-queue://NAME,
 * temp-topic://NAME. Temporary destinations cannot be recreated from a name through the JMS
 * API, so every one this JVM creates or receives is remembered; the provider resolves others.
 */
public final class Destinations {
    private static final Map<String, Destination> TEMPORARY = new ConcurrentHashMap<>();

    private final Session session;
    private final Provider provider;
    private final Map<String, Destination> cache = new HashMap<>();

    Destinations(Session session, Provider provider) {
        this.session = session;
        this.provider = provider;
    }

    public static String key(Destination d) throws JMSException {
        if (d == null) return null;
        String key;
        if (d instanceof TemporaryQueue q) key = temporaryKey("temp-queue://", q.getQueueName());
        else if (d instanceof TemporaryTopic t) key = temporaryKey("temp-topic://", t.getTopicName());
        else if (d instanceof Queue q) key = "queue://" + q.getQueueName();
        else if (d instanceof Topic t) key = "topic://" + t.getTopicName();
        else return d.toString();
        if (key.startsWith("temp-")) TEMPORARY.putIfAbsent(key, d);
        return key;
    }

    /**
     * A temporary destination's key. ActiveMQ Classic's AMQP connector names the temporary
     * destinations it makes by its own address, "temp-queue://ID:...", which Qpid JMS keeps as
     * the name: the key is that address, not the scheme twice over, so that another client (a
     * delay processor on OpenWire) finds the destination by it.
     */
    private static String temporaryKey(String scheme, String name) {
        return name != null && name.startsWith(scheme) ? name : scheme + name;
    }

    static void remember(Destination d) throws JMSException { key(d); }

    static void forget(Destination d) throws JMSException {
        String k = key(d);
        if (k != null) TEMPORARY.remove(k);
    }

    public synchronized Destination resolve(String key) throws JMSException {
        Destination d = cache.get(key);
        if (d != null) return d;
        if (key.startsWith("queue://")) d = session.createQueue(key.substring(8));
        else if (key.startsWith("topic://")) d = session.createTopic(key.substring(8));
        else if (key.startsWith("temp-")) {
            d = TEMPORARY.get(key);
            if (d == null || !provider.takes(d)) d = provider.temporary(key);
            if (d == null) throw new InvalidDestinationException("unknown temporary destination " + key);
            provider.awaitKnown(session, d);
        } else {
            throw new InvalidDestinationException("not a destination key: " + key);
        }
        cache.put(key, d);
        return d;
    }
}
