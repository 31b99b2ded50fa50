package org.pyjms.shim.activemq;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.activemq.broker.Broker;
import org.apache.activemq.broker.BrokerFilter;
import org.apache.activemq.broker.BrokerPlugin;
import org.apache.activemq.broker.ProducerBrokerExchange;
import org.apache.activemq.broker.region.Destination;
import org.apache.activemq.command.ActiveMQDestination;
import org.apache.activemq.command.Message;

/**
 * IBM MQ-style queue attributes enforced by the broker on every put: put enabled
 * (MQRC_PUT_INHIBITED 2051), maximum message length (MQRC_MSG_TOO_BIG_FOR_Q 2030) and
 * maximum depth (MQRC_Q_FULL 2053). The attributes themselves are defined from Python
 * (pyjms.broker.admin), which also applies the delay-specific rules; this filter only
 * refuses puts, with the reason in the message so the client can map it.
 */
public final class DestinationAttributes implements BrokerPlugin {
    /** What the broker enforces for one queue; -1 means no limit. */
    public static final class Limits {
        public final boolean putEnabled;
        public final long maxMessageLength;
        public final long maxDepth;

        public Limits(boolean putEnabled, long maxMessageLength, long maxDepth) {
            this.putEnabled = putEnabled;
            this.maxMessageLength = maxMessageLength;
            this.maxDepth = maxDepth;
        }
    }

    /** Where a delayed message is really going: the staging header names its target. */
    static final String STAGED_TARGET = org.pyjms.shim.Contract.STAGED_TARGET;

    private final Map<String, Limits> limits = new ConcurrentHashMap<>();
    private volatile org.apache.activemq.security.AuthorizationMap authorization;

    /** With security on, a staged message needs write access to its target too (D11). */
    void authorizeTargetsWith(org.apache.activemq.security.AuthorizationMap map) { this.authorization = map; }

    /** Sets (or with null, clears) the limits of a queue, by physical name. */
    public void define(String queue, Limits l) {
        if (l == null) limits.remove(queue);
        else limits.put(queue, l);
    }

    @Override
    public Broker installPlugin(Broker next) {
        return new BrokerFilter(next) {
            @Override
            public void send(ProducerBrokerExchange exchange, Message message) throws Exception {
                ActiveMQDestination d = message.getDestination();
                Limits l = d != null && d.isQueue() ? limits.get(d.getPhysicalName()) : null;
                try {
                    if (l != null) check(getDestinationMap().get(d), d, l, message);
                    if (authorization != null) checkStagedTarget(exchange, message);
                } catch (Exception refused) {
                    failTransaction(exchange, message, refused);
                    throw refused;
                }
                super.send(exchange, message);
            }
        };
    }

    /**
     * A put refused in a transaction fails that transaction, so that its commit is refused and
     * rolls back. OpenWire does so itself for a send nobody waits for (rollbackOnlyOnAsyncException),
     * but AMQP's connector waits for the answer and only rejects the delivery; Qpid JMS does not
     * wait for it in a transaction, so the commit succeeded without the message (and a DLQ
     * handler's move lost it).
     */
    private static void failTransaction(ProducerBrokerExchange exchange, Message message, Exception refused) {
        if (message.getTransactionId() == null || exchange == null) return;
        org.apache.activemq.transaction.Transaction tx =
                exchange.getConnectionContext().getTransactions().get(message.getTransactionId());
        if (tx != null && !tx.isRollbackOnly()) tx.setRollbackOnly(refused);
    }

    private static void check(Destination region, ActiveMQDestination d, Limits l, Message m) throws Exception {
        String q = d.getPhysicalName();
        if (!l.putEnabled) throw refused(2051, "MQRC_PUT_INHIBITED", "queue " + q + " is put-inhibited");
        if (l.maxMessageLength >= 0) {
            long length = length(m);
            if (length > l.maxMessageLength) {
                throw refused(2030, "MQRC_MSG_TOO_BIG_FOR_Q", "message of " + length + " bytes (body and properties) "
                        + "exceeds MAXMSGL " + l.maxMessageLength + " of queue " + q);
            }
        }
        if (l.maxDepth >= 0) {
            long depth = region == null ? 0 : region.getDestinationStatistics().getMessages().getCount();
            if (depth >= l.maxDepth) {
                throw refused(2053, "MQRC_Q_FULL", "queue " + q + " holds " + depth + " messages, MAXDEPTH " + l.maxDepth);
            }
        }
    }

    /** The message's length as IBM MQ counts it (org.pyjms.shim.MessageLength). */
    private static long length(Message m) throws Exception {
        long body;
        if (m instanceof org.apache.activemq.command.ActiveMQTextMessage t) {
            body = org.pyjms.shim.MessageLength.utf8(t.getText());
        } else if (m instanceof org.apache.activemq.command.ActiveMQMapMessage map) {
            body = org.pyjms.shim.MessageLength.entries(map.getContentMap());
        } else {
            body = m.getContent() == null ? 0 : m.getContent().getLength();
        }
        return body + org.pyjms.shim.MessageLength.properties(m.getProperties());
    }

    /** D11: authorisation is checked against the original target at send time, not at delivery. */
    private void checkStagedTarget(ProducerBrokerExchange exchange, Message message) throws Exception {
        Object target = message.getProperty(STAGED_TARGET);
        if (target == null) return;
        org.apache.activemq.security.SecurityContext sc = exchange.getConnectionContext().getSecurityContext();
        if (sc == null || sc.isBrokerContext()) return;
        String key = target.toString();
        ActiveMQDestination d = stagedDestination(key);
        java.util.Set<?> allowed = authorization.getWriteACLs(d);
        if (allowed == null || !sc.isInOneOf(allowed)) {
            throw new SecurityException(org.pyjms.shim.Contract.refusal(2035, "MQRC_NOT_AUTHORIZED",
                    "User " + sc.getUserName() + " is not authorized to write to: " + key));
        }
    }

    /** The destination a staged target key names, read exactly (a key that only contains a
     *  name the sender may write is no such name); a text that is no key is refused (2110). */
    private static ActiveMQDestination stagedDestination(String key) throws jakarta.jms.JMSException {
        if (!org.pyjms.shim.Poison.isKey(key)) {
            throw refused(2110, "MQRC_FORMAT_ERROR", STAGED_TARGET + " " + key + " is not a destination key "
                    + "(queue://NAME, topic://NAME, temp-queue://NAME, temp-topic://NAME)");
        }
        String name = key.substring(key.indexOf("://") + 3);
        if (key.startsWith("topic://")) return new org.apache.activemq.command.ActiveMQTopic(name);
        if (key.startsWith("temp-queue://")) return new org.apache.activemq.command.ActiveMQTempQueue(name);
        if (key.startsWith("temp-topic://")) return new org.apache.activemq.command.ActiveMQTempTopic(name);
        return new org.apache.activemq.command.ActiveMQQueue(name);
    }

    /** The client sees this text; the shim there reads the reason back (Contract.reasonOf). */
    static jakarta.jms.JMSException refused(int reason, String name, String why) {
        return new jakarta.jms.JMSException(org.pyjms.shim.Contract.refusal(reason, name, why), name);
    }
}
