package org.pyjms.shim.activemq;

import jakarta.jms.JMSException;
import jakarta.jms.MapMessage;
import jakarta.jms.Message;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.activemq.command.ActiveMQMapMessage;
import org.apache.activemq.command.ActiveMQMessage;
import org.apache.activemq.util.ByteSequence;
import org.pyjms.shim.Codec;

/**
 * ActiveMQ Classic's received properties and map entries, with strings as they were sent.
 *
 * <p>Its client marshals a primitive map (the properties, a MapMessage body) with names and
 * strings in Java's modified UTF-8, where a character outside the BMP is two 3-byte
 * surrogates, and reads them back by decoding plain UTF-8: such a character came back as two
 * U+FFFD, and two names could become one (issue 15 finding 7). This reads the marshalled map
 * itself; a message that was never marshalled (an in-process send) holds real Strings.
 */
final class ExactStrings implements Codec.ExactValues {
    // OpenWire's primitive type bytes (MarshallingSupport)
    private static final int NULL = 0, BOOLEAN = 1, BYTE = 2, CHAR = 3, SHORT = 4, INTEGER = 5, LONG = 6,
            DOUBLE = 7, FLOAT = 8, STRING = 9, BYTE_ARRAY = 10, BIG_STRING = 13;

    @Override
    public boolean reads(Message m) { return m instanceof ActiveMQMessage; }

    @Override
    public Map<String, Object> properties(Message m) throws JMSException {
        ActiveMQMessage amq = (ActiveMQMessage) m;
        Map<String, Object> exact = parsed(amq.getMarshalledProperties());
        if (exact == null) return null;
        // JMSX* and provider names live in fields, not in the marshalled map: the getter knows them
        java.util.Set<String> mapped;
        try {
            mapped = amq.getProperties().keySet();
        } catch (java.io.IOException e) {
            return null;
        }
        for (Enumeration<?> e = m.getPropertyNames(); e.hasMoreElements(); ) {
            String name = (String) e.nextElement();
            if (!mapped.contains(name)) exact.put(name, m.getObjectProperty(name));
        }
        return exact;
    }

    @Override
    public Map<String, Object> entries(MapMessage m) {
        if (!(m instanceof ActiveMQMapMessage amq) || amq.isCompressed()) return null;
        return parsed(amq.getContent());
    }

    /** The marshalled primitive map, or null if there is none or it is not one pyjms can read. */
    private static Map<String, Object> parsed(ByteSequence bytes) {
        if (bytes == null) return null;
        ByteBuffer in = ByteBuffer.wrap(bytes.getData(), bytes.getOffset(), bytes.getLength());
        try {
            int n = in.getInt();
            if (n < 0) return null;
            Map<String, Object> out = new LinkedHashMap<>();
            for (int i = 0; i < n; i++) {
                String name = string(in, in.getShort() & 0xFFFF);
                if (name == null) return null;
                int type = in.get();
                Object value;
                switch (type) {
                    case NULL -> value = null;
                    case BOOLEAN -> value = in.get() != 0;
                    case BYTE -> value = in.get();
                    case CHAR -> value = in.getChar();
                    case SHORT -> value = in.getShort();
                    case INTEGER -> value = in.getInt();
                    case LONG -> value = in.getLong();
                    case DOUBLE -> value = in.getDouble();
                    case FLOAT -> value = in.getFloat();
                    case STRING -> value = string(in, in.getShort() & 0xFFFF);
                    case BIG_STRING -> value = string(in, in.getInt());
                    case BYTE_ARRAY -> {
                        byte[] b = new byte[in.getInt()];
                        in.get(b);
                        value = b;
                    }
                    default -> { return null; } // nested maps and lists: not JMS values
                }
                if (value == null && (type == STRING || type == BIG_STRING)) return null;
                out.put(name, value);
            }
            return out;
        } catch (BufferUnderflowException | IllegalArgumentException | NegativeArraySizeException e) {
            return null;
        }
    }

    private static String string(ByteBuffer in, int length) {
        if (length < 0 || length > in.remaining()) return null;
        String s = Codec.modifiedUtf8(in.array(), in.position(), length);
        in.position(in.position() + length);
        return s;
    }
}
