package org.pyjms.shim;

import jakarta.jms.JMSException;
import jakarta.jms.Queue;
import jakarta.jms.Topic;

/**
 * Emulates JMS 2.0 shared subscriptions on providers whose client lacks them. Subscription S on
 * topic T becomes the queue "Consumer.S.T", which a virtual-topic broker (ActiveMQ) feeds with
 * every message published to T; the consumers of S compete on that queue.
 */
final class SharedSubscriptions {
    private SharedSubscriptions() {}

    static Queue queueFor(Channel channel, Topic topic, String name) throws JMSException {
        Provider p = channel.provider();
        String t = topic.getTopicName();
        if (name == null || name.isEmpty() || name.contains(".") || name.contains("*") || name.contains(">")) {
            throw new jakarta.jms.InvalidDestinationException(
                    "shared subscription name '" + name + "' must be non-empty without '.', '*' or '>'");
        }
        if (!p.virtualizesTopic(channel.connection(), t)) {
            throw new UnsupportedOperationException(p.name() + " has no shared subscriptions, and its broker "
                    + "does not feed topic '" + t + "' to virtual-topic queues: use a pyjms broker, or a topic "
                    + "named VirtualTopic.<name> on a stock ActiveMQ broker");
        }
        return channel.session().createQueue("Consumer." + name + "." + t);
    }
}
