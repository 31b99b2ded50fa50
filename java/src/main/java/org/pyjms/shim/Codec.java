package org.pyjms.shim;

import jakarta.jms.BytesMessage;
import jakarta.jms.Destination;
import jakarta.jms.JMSException;
import jakarta.jms.MapMessage;
import jakarta.jms.Message;
import jakarta.jms.ObjectMessage;
import jakarta.jms.Session;
import jakarta.jms.StreamMessage;
import jakarta.jms.TextMessage;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Enumeration;

/**
 * The one binary record format shared with Python (pyjms/bridge/codec.py documents it).
 *
 * <p>Python crosses the JVM boundary once per batch: a batch is an int count followed by
 * records. An outgoing record (Python to JMS) is: kind, flags, optional header block
 * (correlation id, type, reply-to), optional property block, body. An incoming record (JMS to
 * Python) is: int record length, kind, flags, int body offset, the full header block, the
 * property block, body; the length and offset let Python decode lazily. Numbers are
 * big-endian; strings are an int byte length (-1 for null) then UTF-8. The shim never
 * deserializes ObjectMessage bodies.
 */
public final class Codec {
    // the record layout's numbers, from the contract
    public static final byte KIND_MESSAGE = Contract.KIND_MESSAGE, KIND_TEXT = Contract.KIND_TEXT,
            KIND_BYTES = Contract.KIND_BYTES, KIND_MAP = Contract.KIND_MAP, KIND_OBJECT = Contract.KIND_OBJECT,
            KIND_STREAM = Contract.KIND_STREAM;
    public static final byte FLAG_HEADERS = Contract.FLAG_HEADERS, FLAG_PROPERTIES = Contract.FLAG_PROPERTIES;
    static final byte T_NULL = Contract.T_NULL, T_BOOL = Contract.T_BOOL, T_BYTE = Contract.T_BYTE,
            T_SHORT = Contract.T_SHORT, T_INT = Contract.T_INT, T_LONG = Contract.T_LONG, T_FLOAT = Contract.T_FLOAT,
            T_DOUBLE = Contract.T_DOUBLE, T_STRING = Contract.T_STRING, T_BYTES = Contract.T_BYTES,
            T_CHAR = Contract.T_CHAR;

    private Codec() {}

    // ---------------------------------------------------------------- decode (Python -> JMS)

    /** Builds a provider message from the record at the buffer's position. */
    static Message decode(ByteBuffer in, Session session, Destinations dests) throws JMSException {
        byte kind = in.get();
        byte flags = in.get();
        String correlationId = null, type = null, replyTo = null;
        if ((flags & FLAG_HEADERS) != 0) {
            correlationId = readString(in);
            type = readString(in);
            replyTo = readString(in);
        }
        Message m;
        int propsStart = in.position();
        if ((flags & FLAG_PROPERTIES) != 0) skipProperties(in);
        switch (kind) {
            case KIND_TEXT -> m = session.createTextMessage(readString(in));
            case KIND_BYTES -> {
                BytesMessage b = session.createBytesMessage();
                byte[] body = new byte[in.getInt()];
                in.get(body);
                // even when empty: an Artemis BytesMessage never written to arrives with 4 bytes
                b.writeBytes(body);
                m = b;
            }
            case KIND_MAP -> {
                MapMessage mm = session.createMapMessage();
                int n = in.getInt();
                for (int i = 0; i < n; i++) {
                    String name = readString(in);
                    mm.setObject(name, readValue(in));
                }
                m = mm;
            }
            case KIND_MESSAGE -> m = session.createMessage();
            default -> throw new IllegalArgumentException("cannot send a message of kind " + kind);
        }
        if (correlationId != null) m.setJMSCorrelationID(correlationId);
        if (type != null) m.setJMSType(type);
        if (replyTo != null) m.setJMSReplyTo(dests.resolve(replyTo));
        if ((flags & FLAG_PROPERTIES) != 0) {
            int end = in.position();
            in.position(propsStart);
            int n = in.getInt();
            for (int i = 0; i < n; i++) {
                String name = readString(in);
                m.setObjectProperty(name, readValue(in));
            }
            in.position(end);
        }
        return m;
    }

    private static void skipProperties(ByteBuffer in) {
        int n = in.getInt();
        for (int i = 0; i < n; i++) {
            skipString(in);
            readValue(in);
        }
    }

    static Object readValue(ByteBuffer in) {
        byte tag = in.get();
        return switch (tag) {
            case T_NULL -> null;
            case T_BOOL -> in.get() != 0;
            case T_BYTE -> in.get();
            case T_SHORT -> in.getShort();
            case T_INT -> in.getInt();
            case T_LONG -> in.getLong();
            case T_FLOAT -> in.getFloat();
            case T_DOUBLE -> in.getDouble();
            case T_STRING -> readString(in);
            case T_CHAR -> in.getChar();
            case T_BYTES -> {
                byte[] b = new byte[in.getInt()];
                in.get(b);
                yield b;
            }
            default -> throw new IllegalArgumentException("unknown value tag " + tag);
        };
    }

    static String readString(ByteBuffer in) {
        int n = in.getInt();
        if (n < 0) return null;
        if (!in.hasArray()) { // a direct buffer over Python's memory (Channel.sendFromArea)
            byte[] b = new byte[n];
            in.get(b);
            return new String(b, StandardCharsets.UTF_8);
        }
        String s = new String(in.array(), in.arrayOffset() + in.position(), n, StandardCharsets.UTF_8);
        in.position(in.position() + n);
        return s;
    }

    private static void skipString(ByteBuffer in) {
        int n = in.getInt();
        if (n > 0) in.position(in.position() + n);
    }

    /** A new message of the same kind with the same body, properties and application headers. */
    public static Message copy(Message m, Session session) throws JMSException {
        Message c = withoutProperties(m, session);
        for (java.util.Map.Entry<String, Object> e : properties(m).entrySet()) c.setObjectProperty(e.getKey(), e.getValue());
        return c;
    }

    /**
     * What Python's copy of a received message would send (pyjms.api.forward), made in the JVM
     * from the message itself: its body, every property its record carries (JMSX properties a
     * sender set included, as {@link #encode} writes them) but those in {@code drop}; then, from
     * {@code block}, the application headers Python gives the copy (correlation id, type and
     * reply-to, as pack_headers writes them) and the properties it adds (pack_properties).
     */
    static Message forwarded(Message m, Session session, Destinations dests, java.util.Set<String> drop,
                             ByteBuffer block) throws JMSException {
        Message c = withoutProperties(m, session);
        c.setJMSCorrelationID(readString(block));
        c.setJMSType(readString(block));
        String replyTo = readString(block);
        c.setJMSReplyTo(replyTo == null ? null : dests.resolve(replyTo));
        for (java.util.Map.Entry<String, Object> e : properties(m, true).entrySet()) {
            if (!drop.contains(e.getKey())) c.setObjectProperty(e.getKey(), e.getValue());
        }
        int n = block.getInt();
        for (int i = 0; i < n; i++) c.setObjectProperty(readString(block), readValue(block));
        return c;
    }

    /** A new message of m's kind with its body and application headers, and no properties. */
    private static Message withoutProperties(Message m, Session session) throws JMSException {
        ExactValues exact = exactFor(m);
        Message c;
        if (m instanceof TextMessage t) c = session.createTextMessage(t.getText());
        else if (m instanceof BytesMessage b) {
            b.reset();
            byte[] body = new byte[(int) b.getBodyLength()];
            if (body.length > 0) b.readBytes(body);
            BytesMessage cb = session.createBytesMessage();
            cb.writeBytes(body);
            c = cb;
        } else if (m instanceof MapMessage mm) {
            MapMessage cm = session.createMapMessage();
            // strings as they were sent, where the provider's getters lose characters (ExactValues)
            java.util.Map<String, Object> entries = exact != null ? exact.entries(mm) : null;
            if (entries != null) {
                for (java.util.Map.Entry<String, Object> e : entries.entrySet()) cm.setObject(e.getKey(), e.getValue());
            }
            for (Enumeration<?> e = mm.getMapNames(); entries == null && e.hasMoreElements(); ) {
                String name = (String) e.nextElement();
                cm.setObject(name, mm.getObject(name));
            }
            c = cm;
        } else if (kindOf(m) == KIND_MESSAGE) c = session.createMessage();
        else throw new IllegalArgumentException("pyjms does not copy " + m.getClass().getSimpleName() + " bodies");
        c.setJMSCorrelationID(m.getJMSCorrelationID());
        c.setJMSType(m.getJMSType());
        c.setJMSReplyTo(m.getJMSReplyTo());
        return c;
    }

    /**
     * A message's properties by name, without JMSX* and the provider's own, and with strings as
     * they were sent where a provider's getters lose characters (ExactValues): what a copy of it
     * carries on.
     */
    public static java.util.Map<String, Object> properties(Message m) throws JMSException {
        return properties(m, false);
    }

    /**
     * {@link #properties(Message)}; with {@code asRecord}, with the JMSX properties a sender set
     * (JMSXGroupID...) too: what a record of the message carries (encodeProperties).
     */
    private static java.util.Map<String, Object> properties(Message m, boolean asRecord) throws JMSException {
        ExactValues exact = exactFor(m);
        java.util.Map<String, Object> all = exact != null ? exact.properties(m) : null;
        java.util.Map<String, Object> kept = new java.util.LinkedHashMap<>();
        if (all != null) {
            for (java.util.Map.Entry<String, Object> e : all.entrySet()) {
                if (copied(e.getKey(), asRecord) && e.getValue() != null) kept.put(e.getKey(), e.getValue());
            }
            return kept;
        }
        for (Enumeration<?> e = m.getPropertyNames(); e.hasMoreElements(); ) {
            String name = (String) e.nextElement();
            if (!copied(name, asRecord)) continue;
            Object v = m.getObjectProperty(name);
            if (v != null) kept.put(name, v);
        }
        return kept;
    }

    /** Whether a copy carries a property of this name (never the provider's own: isPropertyName). */
    private static boolean copied(String name, boolean asRecord) {
        boolean jmsx = asRecord ? "JMSXDeliveryCount".equals(name) : name.startsWith("JMSX");
        return !jmsx && isPropertyName(name);
    }

    // ---------------------------------------------------------------- encode (JMS -> Python)

    /** Appends a received message as a full record (headers, properties, body). */
    public static void encode(Message m, Out out) throws JMSException {
        encode(m, out, PropertyNames.of(m));
    }

    /**
     * A received message's property names, read once for its checks (Poison.problem,
     * Receiver.expired) and its record. Most messages carry no pyjms property, and then none of
     * the dozen lookups of one by name is made: on Artemis each converts the name and searches
     * the message's properties, about a third of what the shim added to a buffered receive.
     *
     * @param names null when the provider could not list them: every check then reads the
     *              properties by name, as it would without this list
     * @param reserved whether any is a pyjms property (JMS_PYJMS_*), or the list is unknown
     */
    public record PropertyNames(java.util.List<String> names, boolean reserved) {
        public static PropertyNames of(Message m) {
            try {
                java.util.List<String> names = new java.util.ArrayList<>();
                boolean reserved = false;
                for (Enumeration<?> e = m.getPropertyNames(); e.hasMoreElements(); ) {
                    String name = (String) e.nextElement();
                    reserved |= name.startsWith(Contract.RESERVED_PREFIX);
                    names.add(name);
                }
                return new PropertyNames(names, reserved);
            } catch (JMSException | RuntimeException unreadable) {
                return new PropertyNames(null, true); // Poison.problem says why
            }
        }
    }

    /** {@link #encode(Message, Out)} with the message's property names read already. */
    public static void encode(Message m, Out out, PropertyNames names) throws JMSException {
        byte kind = kindOf(m);
        int start = out.reserveInt();          // record length, patched below
        out.put(kind);
        out.put((byte) (FLAG_HEADERS | FLAG_PROPERTIES));
        int bodyAt = out.reserveInt();         // body offset from the record start, patched below
        encodeHeaders(m, out, names.reserved());
        encodeProperties(m, out, names.names());
        out.patchInt(bodyAt, out.length() - start);
        switch (kind) {
            case KIND_TEXT -> out.putString(((TextMessage) m).getText());
            case KIND_BYTES -> {
                BytesMessage b = (BytesMessage) m;
                b.reset();
                int n = (int) b.getBodyLength();
                byte[] body = new byte[n];
                if (n > 0) b.readBytes(body);
                out.putBytes(body);
            }
            case KIND_MAP -> {
                MapMessage mm = (MapMessage) m;
                ExactValues exact = exactFor(m);
                java.util.Map<String, Object> entries = exact != null ? exact.entries(mm) : null;
                int countAt = out.reserveInt();
                int count = 0;
                if (entries != null) {
                    for (java.util.Map.Entry<String, Object> e : entries.entrySet()) {
                        out.putString(e.getKey());
                        putValue(out, e.getValue());
                        count++;
                    }
                }
                for (Enumeration<?> e = mm.getMapNames(); entries == null && e.hasMoreElements(); count++) {
                    String name = (String) e.nextElement();
                    out.putString(name);
                    putValue(out, mm.getObject(name));
                }
                out.patchInt(countAt, count);
            }
            default -> { /* no body crosses: object bodies are never deserialized */ }
        }
        out.patchInt(start, out.length() - start);
    }

    /**
     * A body alone (what receiveBody returned) as a record without headers or properties:
     * String as text, byte[] as bytes, a Map with String keys as a map.
     */
    static void encodeBody(Object body, Out out) throws JMSException {
        byte kind = body instanceof String ? KIND_TEXT : body instanceof byte[] ? KIND_BYTES
                : body instanceof java.util.Map ? KIND_MAP : -1;
        if (kind < 0) {
            throw new jakarta.jms.MessageFormatException("pyjms cannot return a body of type "
                    + body.getClass().getName() + " (it was received)");
        }
        int start = out.reserveInt();
        out.put(kind);
        out.put((byte) 0);
        int bodyAt = out.reserveInt();
        out.patchInt(bodyAt, out.length() - start);
        switch (kind) {
            case KIND_TEXT -> out.putString((String) body);
            case KIND_BYTES -> out.putBytes((byte[]) body);
            default -> {
                java.util.Map<?, ?> map = (java.util.Map<?, ?>) body;
                out.putInt(map.size());
                for (java.util.Map.Entry<?, ?> e : map.entrySet()) {
                    out.putString(String.valueOf(e.getKey()));
                    putValue(out, e.getValue());
                }
            }
        }
        out.patchInt(start, out.length() - start);
    }

    /** The header block alone: what a sender learns about the message it sent. */
    public static void encodeHeaders(Message m, Out out) throws JMSException {
        encodeHeaders(m, out, true);
    }

    /** reserved: whether m may carry pyjms properties (the times below); false skips them. */
    private static void encodeHeaders(Message m, Out out, boolean reserved) throws JMSException {
        out.putString(m.getJMSMessageID());
        // a scheduled message's own send time and expiration win over what the provider stamped
        out.putLong(reserved ? carried(m, Channel.SEND_TIME, m.getJMSTimestamp()) : m.getJMSTimestamp());
        String corr = m.getJMSCorrelationID();
        out.putString(corr);
        out.putString(Destinations.key(m.getJMSReplyTo()));
        out.putString(Destinations.key(m.getJMSDestination()));
        out.put((byte) m.getJMSDeliveryMode());
        out.put((byte) (m.getJMSRedelivered() ? 1 : 0));
        out.putString(m.getJMSType());
        out.putLong(reserved ? carried(m, Channel.EXPIRATION, m.getJMSExpiration()) : m.getJMSExpiration());
        long deliveryTime = 0;
        try {
            deliveryTime = m.getJMSDeliveryTime();
        } catch (Throwable unsupported) {
            // JMS 1.1 providers: Python derives it from the timestamp
        }
        // what the shim recorded wins: ActiveMQ's client neither sets nor carries JMSDeliveryTime
        out.putLong(reserved ? carried(m, Channel.DELIVERY_TIME, deliveryTime) : deliveryTime);
        out.put((byte) m.getJMSPriority());
        int deliveryCount = 0;
        try {
            // one lookup, not propertyExists and then getIntProperty
            Object count = m.getObjectProperty("JMSXDeliveryCount");
            if (count instanceof Number n) deliveryCount = n.intValue();
            else if (count instanceof String text) deliveryCount = Integer.parseInt(text); // as getIntProperty converts it
        } catch (Throwable ignored) {
            // not every provider exposes it
        }
        out.putInt(deliveryCount);
    }

    /**
     * Whether a name can be a JMS property: a Java identifier. Providers list annotations of
     * their own among the properties (Artemis: "JMS_AMQP_MA_x-opt-jms-msg-type" on a message that
     * came over AMQP) that no JMS client may set; they are neither shown nor forwarded, so a
     * forwarded message (the delay processor, the DLQ handler) is never refused for them.
     */
    static boolean isPropertyName(String name) {
        if (name.isEmpty() || !Character.isJavaIdentifierStart(name.codePointAt(0))) return false;
        for (int i = Character.charCount(name.codePointAt(0)); i < name.length(); ) {
            int c = name.codePointAt(i);
            if (!Character.isJavaIdentifierPart(c)) return false;
            i += Character.charCount(c);
        }
        return true;
    }

    private static long carried(Message m, String property, long otherwise) throws JMSException {
        return Poison.time(m, property, otherwise); // a malformed one is poison: Python never sees it as a header
    }

    /**
     * Reads a provider's properties and map entries exactly where its own getters lose
     * characters: ActiveMQ Classic's client keeps a received string as its wire's modified
     * UTF-8 and decodes it as plain UTF-8, so a character outside the BMP came back as two
     * U+FFFD (issue 15 finding 7). A provider registers one when it is loaded.
     */
    public interface ExactValues {
        /** Whether this reader knows the message's class. */
        boolean reads(Message m);

        /** Every property by name, or null to read them through the JMS getters. */
        java.util.Map<String, Object> properties(Message m) throws JMSException;

        /** Every map entry by name, or null to read them through the JMS getters. */
        java.util.Map<String, Object> entries(MapMessage m) throws JMSException;
    }

    private static final java.util.List<ExactValues> EXACT = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** Registers a provider's exact reader (once per class). */
    public static void register(ExactValues reader) {
        for (ExactValues r : EXACT) if (r.getClass() == reader.getClass()) return;
        EXACT.add(reader);
    }

    private static ExactValues exactFor(Message m) {
        for (ExactValues r : EXACT) if (r.reads(m)) return r;
        return null;
    }

    /**
     * Java's modified UTF-8 (a character outside the BMP as two 3-byte surrogates; 4-byte
     * UTF-8 sequences are read too), as a String; null if the bytes are not well formed.
     */
    public static String modifiedUtf8(byte[] data, int offset, int length) {
        char[] chars = new char[length];
        int n = 0;
        int i = offset;
        int end = offset + length;
        while (i < end) {
            int b = data[i] & 0xFF;
            if (b < 0x80) { chars[n++] = (char) b; i++; continue; }
            int need = b >= 0xF0 && b < 0xF8 ? 3 : b >= 0xE0 ? 2 : b >= 0xC0 ? 1 : -1;
            if (need < 0 || i + need >= end) return null;
            int cp = need == 3 ? b & 0x07 : need == 2 ? b & 0x0F : b & 0x1F;
            for (int k = 1; k <= need; k++) {
                int c = data[i + k] & 0xFF;
                if ((c & 0xC0) != 0x80) return null;
                cp = (cp << 6) | (c & 0x3F);
            }
            i += need + 1;
            if (cp > 0xFFFF) {
                if (cp > 0x10FFFF) return null;
                chars[n++] = Character.highSurrogate(cp);
                chars[n++] = Character.lowSurrogate(cp);
            } else {
                chars[n++] = (char) cp;
            }
        }
        return new String(chars, 0, n);
    }

    /** names: m's property names (PropertyNames), or null to ask the message for them. */
    private static void encodeProperties(Message m, Out out, java.util.List<String> names) throws JMSException {
        ExactValues exact = exactFor(m);
        java.util.Map<String, Object> exactProperties = exact != null ? exact.properties(m) : null;
        int countAt = out.reserveInt();
        int count = 0;
        if (exactProperties != null) {
            for (java.util.Map.Entry<String, Object> e : exactProperties.entrySet()) {
                if ("JMSXDeliveryCount".equals(e.getKey()) || e.getValue() == null) continue;
                out.putString(e.getKey());
                putValue(out, e.getValue());
                count++;
            }
        }
        Enumeration<?> e = exactProperties != null ? java.util.Collections.emptyEnumeration()
                : names != null ? java.util.Collections.enumeration(names) : m.getPropertyNames();
        while (e.hasMoreElements()) {
            String name = (String) e.nextElement();
            if ("JMSXDeliveryCount".equals(name)) continue; // carried in the header block
            if (!isPropertyName(name)) continue; // the provider's own annotation (see isPropertyName)
            Object v = m.getObjectProperty(name);
            if (v == null) continue;
            out.putString(name);
            putValue(out, v);
            count++;
        }
        out.patchInt(countAt, count);
    }

    static void putValue(Out out, Object v) {
        if (v == null) { out.put(T_NULL); }
        else if (v instanceof String s) { out.put(T_STRING); out.putString(s); }
        else if (v instanceof Integer i) { out.put(T_INT); out.putInt(i); }
        else if (v instanceof Long l) { out.put(T_LONG); out.putLong(l); }
        else if (v instanceof Boolean b) { out.put(T_BOOL); out.put((byte) (b ? 1 : 0)); }
        else if (v instanceof Double d) { out.put(T_DOUBLE); out.putLong(Double.doubleToRawLongBits(d)); }
        else if (v instanceof Float f) { out.put(T_FLOAT); out.putInt(Float.floatToRawIntBits(f)); }
        else if (v instanceof Short s) { out.put(T_SHORT); out.putShort(s); }
        else if (v instanceof Byte b) { out.put(T_BYTE); out.put(b); }
        else if (v instanceof Character c) { out.put(T_CHAR); out.putShort((short) c.charValue()); }
        else if (v instanceof byte[] b) { out.put(T_BYTES); out.putBytes(b); }
        else { out.put(T_STRING); out.putString(String.valueOf(v)); }
    }

    public static byte kindOf(Message m) {
        if (m instanceof TextMessage) return KIND_TEXT;
        if (m instanceof BytesMessage) return KIND_BYTES;
        if (m instanceof MapMessage) return KIND_MAP;
        if (m instanceof ObjectMessage) return KIND_OBJECT;
        if (m instanceof StreamMessage) return KIND_STREAM;
        return KIND_MESSAGE;
    }

    /** A growable big-endian output buffer (cheaper than DataOutputStream for small writes). */
    public static final class Out {
        private byte[] buf;
        private int len;

        public Out(int capacity) { buf = new byte[Math.max(64, capacity)]; }

        private void ensure(int extra) {
            if (len + extra > buf.length) {
                byte[] bigger = new byte[Math.max(buf.length * 2, len + extra)];
                System.arraycopy(buf, 0, bigger, 0, len);
                buf = bigger;
            }
        }

        void put(byte b) { ensure(1); buf[len++] = b; }

        void putShort(short v) { ensure(2); buf[len++] = (byte) (v >> 8); buf[len++] = (byte) v; }

        public void putInt(int v) {
            ensure(4);
            buf[len++] = (byte) (v >> 24); buf[len++] = (byte) (v >> 16);
            buf[len++] = (byte) (v >> 8); buf[len++] = (byte) v;
        }

        public void putLong(long v) { putInt((int) (v >> 32)); putInt((int) v); }

        void putBytes(byte[] b) { putInt(b.length); ensure(b.length); System.arraycopy(b, 0, buf, len, b.length); len += b.length; }

        void putString(String s) {
            if (s == null) { putInt(-1); return; }
            putBytes(s.getBytes(StandardCharsets.UTF_8));
        }

        int length() { return len; }

        int reserveInt() { int at = len; putInt(0); return at; }

        void patchInt(int at, int v) {
            buf[at] = (byte) (v >> 24); buf[at + 1] = (byte) (v >> 16);
            buf[at + 2] = (byte) (v >> 8); buf[at + 3] = (byte) v;
        }

        public byte[] toByteArray() { return java.util.Arrays.copyOf(buf, len); }

        /** Copies the bytes to the start of {@code area} and returns their length, or returns
         *  -1 and copies nothing when they do not fit. */
        int copyTo(ByteBuffer area) {
            if (len > area.capacity()) return -1;
            area.put(0, buf, 0, len);
            return len;
        }
    }
}
