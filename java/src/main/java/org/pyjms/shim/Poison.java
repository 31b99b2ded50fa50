package org.pyjms.shim;

import jakarta.jms.Destination;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.TextMessage;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Enumeration;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Poison: a message whose {@code JMS_PYJMS_*} properties pyjms cannot read (a time that is not a
 * long, a name that is not a String). Anyone who may put to a queue can put one, so no component
 * may fail on it: receivers, listeners and the delay processor quarantine it (a copy without the
 * malformed property, with a dead-letter header naming it and its value, goes to the channel's
 * dead-letter queue, in the channel's session; then the message is acknowledged as any other),
 * browsers skip it. Each quarantine or skip leaves one note, which Python logs
 * (pyjms.bridge.channel.log_poison_notes). Python's twin of the property lists is
 * pyjms.bridge.contract.TIME_PROPERTIES / TEXT_PROPERTIES.
 */
public final class Poison {
    private Poison() {}

    private static final String[] TIMES = {Contract.DELIVERY_TIME, Contract.SEND_TIME, Contract.EXPIRATION,
            Contract.STAGED_EXPIRATION};
    private static final String[] TEXTS = {Contract.MESSAGE_ID, Contract.STAGED_TARGET,
            Contract.STAGED_CORRELATION_ID, Contract.SUBSCRIBER};
    /** IBM MQ's PutApplType for a Java application (MQAT_JAVA), as pyjms.dlq.header writes it. */
    private static final int MQAT_JAVA = 28;
    private static final DateTimeFormatter PUT_DATE = DateTimeFormatter.ofPattern("yyyyMMdd").withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter PUT_TIME = DateTimeFormatter.ofPattern("HHmmss").withZone(ZoneOffset.UTC);
    /** What was quarantined or skipped, one line each, until Python logs it. */
    private static final ConcurrentLinkedQueue<String> NOTES = new ConcurrentLinkedQueue<>();
    private static final int MOST_NOTES = 10_000;

    /**
     * Why pyjms cannot hand the message over: {property, one line naming it and its value}, or
     * null when every pyjms property it carries is well-formed.
     */
    public static String[] problem(Message m) {
        try {
            for (String name : TIMES) {
                Object v = m.getObjectProperty(name);
                if (v == null) continue;
                if (!(v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte)) {
                    return new String[] {name, name + " is " + shown(v) + ", not a long (epoch milliseconds)"};
                }
                if (((Number) v).longValue() < 0) {
                    return new String[] {name, name + " is " + v + ", not a time (epoch milliseconds, 0 or more)"};
                }
            }
            for (String name : TEXTS) {
                Object v = m.getObjectProperty(name);
                if (v != null && !(v instanceof String)) {
                    return new String[] {name, name + " is " + shown(v) + ", not a String"};
                }
            }
            return null;
        } catch (JMSException | RuntimeException e) {
            return new String[] {null, "its properties cannot be read: " + e};
        }
    }

    /** {@link #problem(Message)} with m's property names read already: only a message that
     *  carries a pyjms property (or whose properties cannot be listed) can be poison. */
    public static String[] problem(Message m, Codec.PropertyNames names) {
        return names.reserved() ? problem(m) : null;
    }

    /** The destination key schemes (Destinations.resolve; pyjms.api.destination.from_key). */
    private static final String[] SCHEMES = {"queue://", "topic://", "temp-queue://", "temp-topic://"};

    /**
     * As problem, for a staged message, which must also name its target, as a destination key
     * (queue://NAME, topic://NAME, temp-queue://NAME, temp-topic://NAME), and its delivery time,
     * and have a body pyjms copies (not an object or stream body). A target that is no key is a
     * malformed staging header: MQRC_FORMAT_ERROR, as any other.
     */
    public static String[] stagedProblem(Message m) {
        String[] bad = problem(m);
        if (bad != null) return bad;
        try {
            for (String name : new String[] {Contract.STAGED_TARGET, Contract.DELIVERY_TIME}) {
                if (!m.propertyExists(name)) return new String[] {null, "a staged message without " + name};
            }
            byte kind = Codec.kindOf(m);
            if (kind == Codec.KIND_OBJECT || kind == Codec.KIND_STREAM) {
                // only a foreign client stages one (pyjms's producers refuse to): the processor
                // cannot copy it to its target
                return new String[] {null, "a staged message with " + (kind == Codec.KIND_OBJECT ? "an object"
                        : "a stream") + " body, which pyjms never copies, so it cannot be delivered"};
            }
            String target = m.getStringProperty(Contract.STAGED_TARGET);
            if (!isKey(target)) {
                return new String[] {null, Contract.STAGED_TARGET + " is " + shown(target)
                        + ", not a destination key (queue://NAME, topic://NAME, temp-queue://NAME, temp-topic://NAME)"};
            }
            return null;
        } catch (JMSException | RuntimeException e) {
            return new String[] {null, "its properties cannot be read: " + e};
        }
    }

    /** Whether a text is a destination key with a name. */
    public static boolean isKey(String key) {
        if (key == null) return false;
        for (String scheme : SCHEMES) {
            if (key.startsWith(scheme) && key.length() > scheme.length()) return true;
        }
        return false;
    }

    /** MQRC_BACKOUT_THRESHOLD_REACHED: a message delivered this many times is not tried again. */
    public static final int BACKOUT_REASON = 2362;

    /**
     * Why a staged or slot message that came back again and again is not tried again: {null,
     * one line}, when the provider delivered it more than {@code most} times (JMSXDeliveryCount:
     * each attempt that failed rolled back), else null.
     */
    public static String[] backoutProblem(Message m, int most) {
        try {
            Object count = m.getObjectProperty("JMSXDeliveryCount");
            if (!(count instanceof Number n)) return null;
            // counted from the delivery this JVM first took the message at: a message a killed
            // processor held came back to this one counted up, through no fault of its own (a
            // standby that takes over after many kills must not dead-letter what they held)
            int first = firstSeen(m.getJMSMessageID(), n.intValue());
            int attempts = n.intValue() - first;
            if (attempts >= most) {
                return new String[] {null, "delivered " + n.intValue() + " times, " + attempts + " of them to this "
                        + "processor: each attempt to move it failed (the most is " + most + ")"};
            }
            // and however many processors it went through (one that kills its process each time)
            if (n.intValue() > MOST_DELIVERIES) {
                return new String[] {null, "delivered " + n.intValue() + " times: each attempt to move it failed "
                        + "(the most is " + MOST_DELIVERIES + " deliveries in all)"};
            }
            return null;
        } catch (JMSException | RuntimeException e) {
            return null;
        }
    }

    /** The most deliveries of a staged or slot message, counted across processors (a takeover
     *  hands the next one what a killed one held, counted up); pyjms.delay.processor_moves
     *  MOST_DELIVERIES is its twin. */
    public static final int MOST_DELIVERIES = 50;

    /** The delivery count each message had when this JVM first took it (the most recent ones). */
    private static final java.util.Map<String, Integer> FIRST_SEEN = new java.util.LinkedHashMap<>(1024, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(java.util.Map.Entry<String, Integer> eldest) {
            return size() > 100_000;
        }
    };

    private static int firstSeen(String id, int count) {
        if (id == null) return count;
        synchronized (FIRST_SEEN) {
            Integer first = FIRST_SEEN.putIfAbsent(id, count);
            return first == null ? count : Math.min(first, count);
        }
    }

    /**
     * The delay processor's check of each staged or slot message it takes: a malformed one
     * (stagedProblem), or one delivered more than mostAttempts times (backoutProblem), goes to
     * the channel's dead-letter queue in its transaction. Returns whether m was quarantined.
     */
    public static boolean quarantineStaged(Channel channel, Message m, int mostAttempts) throws JMSException {
        String[] bad = stagedProblem(m);
        if (bad != null) {
            quarantine(channel, m, bad);
            return true;
        }
        bad = backoutProblem(m, mostAttempts);
        if (bad != null) {
            quarantine(channel, m, bad, BACKOUT_REASON, "MQRC_BACKOUT_THRESHOLD_REACHED");
            return true;
        }
        return false;
    }

    private static String shown(Object v) {
        String text = String.valueOf(v);
        if (text.length() > 80) text = text.substring(0, 77) + "...";
        return "'" + text + "' (" + v.getClass().getSimpleName() + ")";
    }

    /** A time property in epoch ms; {@code otherwise} when it is absent or malformed (never throws). */
    public static long time(Message m, String name, long otherwise) {
        try {
            Object v = m.getObjectProperty(name);
            return v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte
                    ? ((Number) v).longValue() : otherwise;
        } catch (JMSException | RuntimeException e) {
            return otherwise;
        }
    }

    /**
     * Puts a copy of m on the channel's dead-letter queue (Channel.setDeadLetterQueue), in the
     * channel's session, so in its transaction when it is transacted: the body, the headers and
     * every property but the malformed one, plus a dead-letter header (pyjms.dlq.header) with
     * reason MQRC_FORMAT_ERROR and {@code JMS_PYJMS_DLQDetail} naming the property and its value.
     */
    public static void quarantine(Channel channel, Message m, String[] problem) throws JMSException {
        quarantine(channel, m, problem, Contract.QUARANTINE_REASON, "MQRC_FORMAT_ERROR");
    }

    /** As quarantine, with another IBM MQ reason (e.g. MQRC_BACKOUT_THRESHOLD_REACHED). */
    public static void quarantine(Channel channel, Message m, String[] problem, int reason, String reasonName)
            throws JMSException {
        String detail = problem[1];
        Message copy;
        try {
            copy = Codec.copy(m, channel.session());
        } catch (JMSException | RuntimeException e) {
            // an object body is never deserialized: the headers and properties go alone
            copy = channel.session().createMessage();
            copy.setJMSCorrelationID(m.getJMSCorrelationID());
            copy.setJMSType(m.getJMSType());
            copy.setJMSReplyTo(m.getJMSReplyTo());
            detail += " (its body is not kept: pyjms never copies object or stream bodies)";
        }
        copy.clearProperties();
        for (Enumeration<?> e = m.getPropertyNames(); e.hasMoreElements(); ) {
            String name = (String) e.nextElement();
            if (name.startsWith("JMSX") || name.equals(problem[0]) || name.startsWith(Contract.DEAD_LETTER_HEADER_PREFIX)
                    || name.equals(Contract.DLQ_DETAIL)) continue;
            Object v;
            try {
                v = m.getObjectProperty(name);
            } catch (RuntimeException unreadable) {
                continue;
            }
            try {
                if (v != null) copy.setObjectProperty(name, v);
            } catch (JMSException | RuntimeException notJms) {
                // a name JMS refuses to set, e.g. JMS_AMQP_MA_x-opt-jms-msg-type, which Artemis
                // makes of an AMQP client's message annotations: the copy goes without it
            }
        }
        Instant now = Instant.now();
        String p = Contract.DEAD_LETTER_HEADER_PREFIX;
        Destination from = m.getJMSDestination();
        String destQ = from == null ? "" : Destinations.key(from);
        String where = destQ;
        String destQName = destQ.startsWith("queue://") ? destQ.substring(8) : destQ;
        String destQMgr = "";
        // a dead letter already: its header's destination stays, and its reason is told
        Object earlierQ = property(m, p + "DestQ"), earlierQMgr = property(m, p + "DestQMgr");
        Object earlierReason = property(m, p + "Reason");
        if (earlierQ instanceof String q && !q.isEmpty()) {
            destQName = q;
            destQMgr = earlierQMgr instanceof String qm ? qm : "";
            detail += "; dead-lettered before for " + destQName + " with reason " + earlierReason;
        }
        copy.setIntProperty(p + "Reason", reason);
        copy.setStringProperty(p + "DestQ", destQName);
        copy.setStringProperty(p + "DestQMgr", destQMgr);
        copy.setStringProperty(p + "PutApplName", channel.putApplName());
        copy.setIntProperty(p + "PutApplType", MQAT_JAVA);
        copy.setStringProperty(p + "PutDate", PUT_DATE.format(now));
        copy.setStringProperty(p + "PutTime", PUT_TIME.format(now) + String.format("%02d", now.getNano() / 10_000_000));
        copy.setStringProperty(p + "Format", m instanceof TextMessage ? "MQSTR" : "");
        copy.setStringProperty(Contract.DLQ_DETAIL, detail);
        long expiration = m.getJMSExpiration();
        long ttl = expiration == 0 ? 0 : Math.max(1, expiration - now.toEpochMilli());
        channel.sendCopy(channel.deadLetterQueue(), copy, m.getJMSDeliveryMode(), m.getJMSPriority(), ttl);
        channel.countQuarantine();
        note("message " + m.getJMSMessageID() + " on " + (where.isEmpty() ? "?" : where) + " quarantined to "
                + channel.deadLetterQueue() + " (reason " + reason + " " + reasonName + "): " + detail);
    }

    private static Object property(Message m, String name) {
        try {
            return m.getObjectProperty(name);
        } catch (JMSException | RuntimeException e) {
            return null;
        }
    }

    /** Records that a browser skipped a poison message. */
    static void skipped(Message m, String[] problem) {
        String id;
        try {
            id = m.getJMSMessageID();
        } catch (JMSException | RuntimeException e) {
            id = "?";
        }
        note("browse skipped message " + id + ", which pyjms cannot read: " + problem[1]);
    }

    private static void note(String line) {
        if (NOTES.size() < MOST_NOTES) NOTES.add(line);
    }

    /** The notes since the last call, one per line, or null when there are none (Python logs them). */
    public static String drainNotes() {
        if (NOTES.isEmpty()) return null;
        StringBuilder all = new StringBuilder();
        for (String line; (line = NOTES.poll()) != null; ) {
            if (all.length() > 0) all.append('\n');
            all.append(line);
        }
        return all.toString();
    }
}
