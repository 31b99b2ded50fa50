package org.pyjms.shim.artemis;

import java.lang.reflect.Field;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.activemq.artemis.api.core.ActiveMQException;
import org.apache.activemq.artemis.api.core.ActiveMQExceptionType;
import org.apache.activemq.artemis.api.core.Message;
import org.apache.activemq.artemis.api.core.SimpleString;
import org.apache.activemq.artemis.core.paging.PagingStore;
import org.apache.activemq.artemis.core.security.CheckType;
import org.apache.activemq.artemis.core.server.ActiveMQServer;
import org.apache.activemq.artemis.core.server.ServerSession;
import org.apache.activemq.artemis.core.server.impl.ServerSessionImpl;
import org.apache.activemq.artemis.core.server.plugin.ActiveMQServerMessagePlugin;
import org.apache.activemq.artemis.core.transaction.Transaction;

/**
 * IBM MQ-style queue attributes enforced by the Artemis broker on every put, as the ActiveMQ
 * broker's DestinationAttributes does: put enabled (MQRC_PUT_INHIBITED 2051), maximum message
 * length (MQRC_MSG_TOO_BIG_FOR_Q 2030) and maximum depth (MQRC_Q_FULL 2053). The attributes are
 * defined from Python (the admin service); this plugin only refuses sends, with the reason in
 * the text, which the client maps back. With security on, a staged delayed message also needs
 * the right to send to its target (D11), checked when it is staged.
 */
public final class QueueLimits implements ActiveMQServerMessagePlugin {
    private record Limits(boolean putEnabled, long maxMessageLength, long maxDepth) {}

    /** Where a delayed message is really going: the staging header names its target. */
    private static final String STAGED_TARGET = org.pyjms.shim.Contract.STAGED_TARGET;

    private final ActiveMQServer server;
    private final Map<String, Limits> limits = new ConcurrentHashMap<>();

    QueueLimits(ActiveMQServer server) { this.server = server; }

    /** Sets the limits of a queue (by name); -1 means no limit. */
    public void define(String queue, boolean putEnabled, long maxMessageLength, long maxDepth) {
        limits.put(queue, new Limits(putEnabled, maxMessageLength, maxDepth));
    }

    /** Removes a queue's limits. */
    public void clear(String queue) { limits.remove(queue); }

    @Override
    public void beforeSend(ServerSession session, Transaction tx, Message message, boolean direct,
                           boolean noAutoCreateQueue) throws ActiveMQException {
        String address = message.getAddress();
        Limits l = address == null || limits.isEmpty() ? null : limits.get(address);
        try {
            if (l != null) check(address, l, message);
            if (session != null && server.getConfiguration().isSecurityEnabled()) checkStagedTarget(session, message);
        } catch (ActiveMQException refused) {
            // a send in a transaction is not answered (the client does not wait for it), and the
            // broker only logs its failure: the commit would then succeed without the message.
            // The transaction fails instead, so its commit is refused with this reason and rolls
            // back (a message got in it stays where it was): nothing is lost
            if (tx != null && transacted(session)) tx.markAsRollbackOnly(refused);
            throw refused;
        }
    }

    /** Artemis hands a non-transacted session's own transaction to the plugin too, and that
     *  transaction carries the session's auto-committed acknowledgements: marking it would roll
     *  back the next one, and the message got would come again (D19, seen as a duplicate). */
    private static final Field AUTO_COMMIT_SENDS = autoCommitSends();

    private static Field autoCommitSends() {
        try {
            Field f = ServerSessionImpl.class.getDeclaredField("autoCommitSends");
            f.setAccessible(true);
            return f;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    private static boolean transacted(ServerSession session) {
        if (AUTO_COMMIT_SENDS == null || !(session instanceof ServerSessionImpl)) return session != null;
        try {
            return !AUTO_COMMIT_SENDS.getBoolean(session);
        } catch (IllegalAccessException e) {
            return true;
        }
    }

    private void check(String q, Limits l, Message m) throws ActiveMQException {
        if (!l.putEnabled) throw refused(2051, "MQRC_PUT_INHIBITED", "queue " + q + " is put-inhibited", null);
        if (l.maxMessageLength >= 0) {
            long size = length(m);
            if (size > l.maxMessageLength) {
                throw refused(2030, "MQRC_MSG_TOO_BIG_FOR_Q", "message of " + size + " bytes (body and properties) "
                        + "exceeds MAXMSGL " + l.maxMessageLength + " of queue " + q, null);
            }
        }
        if (l.maxDepth >= 0) {
            long depth = depth(q);
            if (depth >= l.maxDepth) {
                throw refused(2053, "MQRC_Q_FULL", "queue " + q + " holds " + depth + " messages, MAXDEPTH "
                        + l.maxDepth, ActiveMQExceptionType.ADDRESS_FULL);
            }
        }
    }

    /** The message's length as IBM MQ counts it (org.pyjms.shim.MessageLength). */
    private static long length(Message m) {
        long body;
        try {
            org.apache.activemq.artemis.api.core.ICoreMessage core = m.toCore();
            org.apache.activemq.artemis.api.core.ActiveMQBuffer buffer = core.getReadOnlyBodyBuffer();
            if (core.getType() == Message.TEXT_TYPE) {
                SimpleString text = buffer.readNullableSimpleString();
                body = text == null ? 0 : org.pyjms.shim.MessageLength.utf8(text.toString());
            } else if (core.getType() == Message.MAP_TYPE) {
                org.apache.activemq.artemis.utils.collections.TypedProperties map =
                        org.apache.activemq.artemis.reader.MapMessageUtil.readBodyMap(buffer);
                body = org.pyjms.shim.MessageLength.entries(plain(map.getPropertyNames(), map::getProperty));
            } else {
                body = buffer.readableBytes();
            }
        } catch (RuntimeException unreadable) {
            body = m.getWholeMessageSize();
        }
        return body + org.pyjms.shim.MessageLength.properties(plain(m.getPropertyNames(), m::getObjectProperty));
    }

    /** Names and values as Java strings (Artemis keeps SimpleStrings). */
    private static java.util.Map<String, Object> plain(java.util.Set<SimpleString> names,
                                                       java.util.function.Function<SimpleString, Object> value) {
        java.util.Map<String, Object> out = new java.util.HashMap<>();
        for (SimpleString name : names) {
            Object v = value.apply(name);
            out.put(name.toString(), v instanceof SimpleString s ? s.toString() : v);
        }
        return out;
    }

    /**
     * The messages on a queue's address now, as its paging store counts them: a message is
     * counted there when it is routed, where the queue itself counts it only once its executor
     * has taken it in (puts in quick succession each saw the depth of before the others).
     */
    private long depth(String queue) throws ActiveMQException {
        try {
            PagingStore store = server.getPagingManager().getPageStore(SimpleString.of(queue));
            return store == null ? 0 : store.getAddressElements();
        } catch (ActiveMQException e) {
            throw e;
        } catch (Exception e) {
            throw new ActiveMQException("cannot read the depth of queue " + queue, e);
        }
    }

    /** D11: authorisation is checked against the original target at send time, not at delivery. */
    private void checkStagedTarget(ServerSession session, Message message) throws ActiveMQException {
        Object target = message.getObjectProperty(STAGED_TARGET);
        if (target == null) return;
        String key = target.toString();
        // read exactly: a key that only contains a name the sender may write is no such name
        if (!org.pyjms.shim.Poison.isKey(key)) {
            throw refused(2110, "MQRC_FORMAT_ERROR", STAGED_TARGET + " " + key + " is not a destination key "
                    + "(queue://NAME, topic://NAME, temp-queue://NAME, temp-topic://NAME)", null);
        }
        String address = key.substring(key.indexOf("://") + 3);
        try {
            server.getSecurityStore().check(SimpleString.of(address), CheckType.SEND, session);
        } catch (Exception denied) {
            throw refused(2035, "MQRC_NOT_AUTHORIZED", "User " + session.getUsername()
                    + " is not authorized to send to " + key, ActiveMQExceptionType.SECURITY_EXCEPTION);
        }
    }

    private static ActiveMQException refused(int reason, String name, String why, ActiveMQExceptionType type) {
        String text = org.pyjms.shim.Contract.refusal(reason, name, why);
        return type == null ? new ActiveMQException(text) : new ActiveMQException(type, text);
    }
}
