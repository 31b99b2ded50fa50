package org.pyjms.shim.activemq;

import java.util.Arrays;
import java.util.Map;
import org.apache.activemq.broker.Broker;
import org.apache.activemq.broker.BrokerFilter;
import org.apache.activemq.broker.BrokerPlugin;
import org.apache.activemq.broker.ProducerBrokerExchange;
import org.apache.activemq.command.ActiveMQBytesMessage;
import org.apache.activemq.command.ActiveMQDestination;
import org.apache.activemq.command.ActiveMQMessage;
import org.apache.activemq.command.ActiveMQTextMessage;
import org.apache.activemq.command.Message;
import org.apache.activemq.util.ByteSequence;
import org.pyjms.shim.Contract;

/**
 * Staged messages filed under the delay processor's slot queues keep only their marshalled
 * form (properties and body as bytes) while they wait. A message sent over vm:// arrives as
 * objects (a properties map, a text String); this marshals it, and the slot queues' policy
 * (reduceMemoryFootprint) then drops the objects, which took about half of each held message's
 * heap. Whoever reads the message later unmarshals its own copy.
 */
final class CompactSlots implements BrokerPlugin {
    @Override
    public Broker installPlugin(Broker next) {
        return new BrokerFilter(next) {
            @Override
            public void send(ProducerBrokerExchange exchange, Message message) throws Exception {
                ActiveMQDestination to = message.getDestination();
                if (to != null && to.isQueue() && to.getPhysicalName().startsWith(Contract.SLOT_PREFIX)
                        && !message.isMarshalled() && marshalsExactly(message)) {
                    message.beforeMarshall(null); // the wire format is not used for properties and body
                    // marshalling leaves each in a buffer of 1 KB or more: kept as it is, that
                    // doubled the heap of a held message
                    message.setMarshalledProperties(exact(message.getMarshalledProperties()));
                    message.setContent(exact(message.getContent()));
                }
                super.send(exchange, message);
            }
        };
    }

    /**
     * Whether the message reads back the same after marshalling. ActiveMQ writes strings in
     * Java's modified UTF-8 and reads them back as plain UTF-8, so a NUL or a character
     * outside the BMP would come back as U+FFFD (pyjms reads such strings exactly only from
     * the marshalled properties of a message that came over the wire, ExactStrings): such a
     * message, and map bodies, stay as they are.
     */
    private static boolean marshalsExactly(Message message) throws Exception {
        if (message instanceof ActiveMQTextMessage text) {
            if (!plain(text.getText())) return false;
        } else if (!(message instanceof ActiveMQBytesMessage) && message.getClass() != ActiveMQMessage.class) {
            return false;
        }
        for (Map.Entry<String, Object> e : message.getProperties().entrySet()) {
            if (!plain(e.getKey()) || (e.getValue() instanceof String v && !plain(v))) return false;
        }
        return true;
    }

    private static boolean plain(String s) {
        if (s == null) return true;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == 0 || Character.isSurrogate(c)) return false;
        }
        return true;
    }

    /** The bytes in an array of their own size (a new sequence: another copy may share the old one). */
    private static ByteSequence exact(ByteSequence bytes) {
        if (bytes == null || (bytes.offset == 0 && bytes.length == bytes.data.length)) return bytes;
        return new ByteSequence(Arrays.copyOfRange(bytes.data, bytes.offset, bytes.offset + bytes.length));
    }
}
