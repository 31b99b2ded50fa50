// A plain Jakarta JMS client for pyjms's interoperability tests: it knows nothing of pyjms,
// only jakarta.jms and a provider's connection factory: ActiveMQ's, or Qpid JMS's for amqp://
// URLs (then Qpid JMS's jars must be on the classpath too). Run it with Java's single-file
// source launcher (java -cp <activemq jars>:<log4j jars> JavaPeer.java <mode> <url> <queue> ...):
//
//   receive <url> <queue> <count>   prints each received message as one JSON line on stdout
//   send <url> <queue> <reply-to>   sends a fixed set of messages (text, bytes, map, object)
//                                   and prints one JSON line per message sent
//   send-delayed <url> <queue> <ms> sends one text message with that JMS 2.0 delivery delay
//                                   (a client that has setDeliveryDelay: Qpid JMS) and prints it
//
// There is no JSON library on the classpath, so the JSON is written by hand. Every non-ASCII
// character is escaped, so the output does not depend on the platform's stdout encoding.

import jakarta.jms.BytesMessage;
import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.DeliveryMode;
import jakarta.jms.Destination;
import jakarta.jms.JMSException;
import jakarta.jms.MapMessage;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.ObjectMessage;
import jakarta.jms.Session;
import jakarta.jms.StreamMessage;
import jakarta.jms.TextMessage;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import org.apache.activemq.ActiveMQConnectionFactory;

public class JavaPeer {
    /** How long one receive waits; the caller's subprocess timeout bounds the whole run. */
    private static final long RECEIVE_TIMEOUT_MS = 30_000;

    // The fixed values "send" uses; tests/interop/test_java_peer.py asserts the same ones.
    static final String TEXT = "h\u00e9llo from Java \u2713 \ud83d\ude00";
    static final byte[] BYTES = {0x00, 0x01, 0x7f, (byte) 0x80, (byte) 0xff};
    static final long TTL_MS = 120_000;

    private static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.US_ASCII);

    public static void main(String[] args) throws Exception {
        if (args.length < 3) usage();
        String mode = args[0], url = args[1], queue = args[2];
        Connection connection = connectionFactory(url).createConnection();
        try {
            connection.start();
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            switch (mode) {
                case "receive" -> {
                    if (args.length != 4) usage();
                    System.exit(receive(session, session.createQueue(queue), Integer.parseInt(args[3])));
                }
                case "send" -> {
                    if (args.length != 4) usage();
                    send(session, session.createQueue(queue), session.createQueue(args[3]));
                }
                case "send-delayed" -> {
                    if (args.length != 4) usage();
                    sendDelayed(session, session.createQueue(queue), Long.parseLong(args[3]));
                }
                default -> usage();
            }
        } finally {
            connection.close();
        }
    }

    /** Qpid JMS's factory (by name: ActiveMQ-only runs need no Qpid jars) for AMQP, else ActiveMQ's. */
    private static ConnectionFactory connectionFactory(String url) throws Exception {
        if (url.startsWith("amqp")) {
            return (ConnectionFactory) Class.forName("org.apache.qpid.jms.JmsConnectionFactory")
                    .getConstructor(String.class).newInstance(url);
        }
        return new ActiveMQConnectionFactory(url);
    }

    private static void usage() {
        System.err.println("usage: JavaPeer receive <url> <queue> <count> | send <url> <queue> <reply-to-queue>"
                + " | send-delayed <url> <queue> <delay-ms>");
        System.exit(64);
    }

    // ------------------------------------------------------------------ receive

    private static int receive(Session session, Destination queue, int count) throws JMSException {
        MessageConsumer consumer = session.createConsumer(queue);
        for (int i = 0; i < count; i++) {
            Message m = consumer.receive(RECEIVE_TIMEOUT_MS);
            if (m == null) {
                System.err.println("JavaPeer: timed out after " + i + " of " + count + " messages");
                return 3;
            }
            OUT.println(describe(m));
        }
        return 0;
    }

    /** One message as a JSON object: kind, body, headers, and every property with its Java type. */
    static String describe(Message m) throws JMSException {
        Json j = new Json().begin();
        j.key("type").str(kindOf(m));
        if (m instanceof TextMessage t) {
            j.key("text").str(t.getText());
        } else if (m instanceof BytesMessage b) {
            byte[] body = new byte[(int) b.getBodyLength()];
            b.readBytes(body);
            j.key("bytes").str(hex(body));
        } else if (m instanceof MapMessage mm) {
            j.key("map").begin();
            for (String name : sortedNames(mm.getMapNames())) j.key(name).typed(mm.getObject(name));
            j.end();
        }
        j.key("JMSMessageID").str(m.getJMSMessageID());
        j.key("JMSCorrelationID").str(m.getJMSCorrelationID());
        j.key("JMSType").str(m.getJMSType());
        j.key("JMSPriority").num(m.getJMSPriority());
        j.key("JMSDeliveryMode").num(m.getJMSDeliveryMode());
        j.key("JMSTimestamp").num(m.getJMSTimestamp());
        j.key("JMSExpiration").num(m.getJMSExpiration());
        j.key("JMSReplyTo").str(m.getJMSReplyTo() == null ? null : m.getJMSReplyTo().toString());
        j.key("JMSDestination").str(m.getJMSDestination() == null ? null : m.getJMSDestination().toString());
        j.key("JMSRedelivered").bool(m.getJMSRedelivered());
        j.key("JMSDeliveryTime").num(deliveryTime(m));
        j.key("properties").begin();
        for (String name : sortedNames(m.getPropertyNames())) {
            // JMSX* are the provider's (ActiveMQ 6.3's client lists JMSXDeliveryCount, Qpid JMS's too)
            if (!name.startsWith("JMSX")) j.key(name).typed(m.getObjectProperty(name));
        }
        j.end();
        return j.end().toString();
    }

    private static String kindOf(Message m) {
        if (m instanceof TextMessage) return "TextMessage";
        if (m instanceof BytesMessage) return "BytesMessage";
        if (m instanceof MapMessage) return "MapMessage";
        if (m instanceof ObjectMessage) return "ObjectMessage";
        if (m instanceof StreamMessage) return "StreamMessage";
        return "Message";
    }

    private static List<String> sortedNames(Enumeration<?> names) {
        List<String> out = new ArrayList<>();
        while (names.hasMoreElements()) out.add((String) names.nextElement());
        Collections.sort(out);
        return out;
    }

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder(b.length * 2);
        for (byte x : b) sb.append(Character.forDigit((x >> 4) & 0xf, 16)).append(Character.forDigit(x & 0xf, 16));
        return sb.toString();
    }

    // ------------------------------------------------------------------ send

    private static void send(Session session, Destination queue, Destination replyTo) throws JMSException {
        MessageProducer producer = session.createProducer(queue);

        // A TextMessage with a property of every JMS type and every settable header.
        TextMessage text = session.createTextMessage(TEXT);
        text.setBooleanProperty("pBoolean", true);
        text.setByteProperty("pByte", (byte) -7);
        text.setShortProperty("pShort", (short) -12345);
        text.setIntProperty("pInt", 123_456_789);
        text.setLongProperty("pLong", 9_007_199_254_740_993L); // 2^53 + 1: not exact as a double
        text.setFloatProperty("pFloat", 3.5f);
        text.setDoubleProperty("pDouble", -2.5e-3);
        text.setStringProperty("pString", "\u00fcn\u00efc\u00f6d\u00e9 \"quoted\" \\ \u2713");
        text.setJMSCorrelationID("java-corr-1");
        text.setJMSType("java.order");
        text.setJMSReplyTo(replyTo);
        producer.send(text, DeliveryMode.PERSISTENT, 6, TTL_MS);
        sent(text);

        // A BytesMessage, non-persistent, with every byte value class (0, small, sign bit, 0xff).
        BytesMessage bytes = session.createBytesMessage();
        bytes.writeBytes(BYTES);
        bytes.setStringProperty("part", "bytes");
        producer.send(bytes, DeliveryMode.NON_PERSISTENT, 3, 0);
        sent(bytes);

        // A MapMessage with an entry of every MapMessage type (char, byte[] and null included).
        MapMessage map = session.createMapMessage();
        map.setBoolean("mBoolean", false);
        map.setByte("mByte", (byte) 127);
        map.setShort("mShort", (short) -32768);
        map.setChar("mChar", '\u00e7');
        map.setInt("mInt", -2_147_483_648);
        map.setLong("mLong", Long.MAX_VALUE);
        map.setFloat("mFloat", -0.25f);
        map.setDouble("mDouble", 1.0e100);
        map.setString("mString", "map \u2713");
        map.setBytes("mBytes", new byte[] {(byte) 0xde, (byte) 0xad, (byte) 0xbe, (byte) 0xef});
        map.setString("mNull", null); // an entry that exists with no value
        map.setIntProperty("part", 3);
        producer.send(map);
        sent(map);

        // An ObjectMessage: pyjms must refuse to deserialize its body but still read the rest.
        ArrayList<String> list = new ArrayList<>(List.of("alpha", "beta"));
        ObjectMessage object = session.createObjectMessage(list);
        object.setJMSCorrelationID("java-corr-object");
        object.setJMSType("java.util.ArrayList");
        object.setLongProperty("size", list.size());
        object.setStringProperty("part", "object");
        producer.send(object);
        sent(object);
    }

    /** One text message with every property type, delayed by the client's own setDeliveryDelay. */
    private static void sendDelayed(Session session, Destination queue, long delayMs) throws JMSException {
        MessageProducer producer = session.createProducer(queue);
        producer.setDeliveryDelay(delayMs);
        TextMessage text = session.createTextMessage("delayed from Java");
        text.setBooleanProperty("pBoolean", true);
        text.setByteProperty("pByte", (byte) -7);
        text.setShortProperty("pShort", (short) -12345);
        text.setIntProperty("pInt", 123_456_789);
        text.setLongProperty("pLong", 9_007_199_254_740_993L);
        text.setFloatProperty("pFloat", 3.5f);
        text.setDoubleProperty("pDouble", -2.5e-3);
        text.setStringProperty("pString", "delayed \u2713");
        text.setJMSCorrelationID("java-delayed");
        text.setJMSType("java.delayed");
        producer.send(text, DeliveryMode.PERSISTENT, 6, TTL_MS);
        sent(text);
    }

    /** What the test needs to match a sent message with the one pyjms receives. */
    private static void sent(Message m) throws JMSException {
        OUT.println(new Json().begin()
                .key("sent").str(kindOf(m))
                .key("JMSMessageID").str(m.getJMSMessageID())
                .key("JMSTimestamp").num(m.getJMSTimestamp())
                .key("JMSExpiration").num(m.getJMSExpiration())
                .key("JMSDeliveryTime").num(deliveryTime(m))
                .end());
    }

    /** JMS 2.0's JMSDeliveryTime; 0 where a client does not implement it. */
    private static long deliveryTime(Message m) {
        try {
            return m.getJMSDeliveryTime();
        } catch (JMSException | RuntimeException unsupported) {
            return 0;
        }
    }

    // ------------------------------------------------------------------ JSON, by hand

    /** A minimal JSON writer: objects, strings, numbers, booleans and typed values. */
    static final class Json {
        private final StringBuilder sb = new StringBuilder();
        private boolean first = true;

        Json begin() {
            sb.append('{');
            first = true;
            return this;
        }

        Json end() {
            sb.append('}');
            first = false;
            return this;
        }

        Json key(String k) {
            if (!first) sb.append(',');
            first = false;
            quote(k);
            sb.append(':');
            return this;
        }

        Json str(String s) {
            if (s == null) sb.append("null");
            else quote(s);
            return this;
        }

        Json num(long n) {
            sb.append(n);
            return this;
        }

        Json bool(boolean b) {
            sb.append(b);
            return this;
        }

        /** {"type": <Java class name>, "value": ...}: byte[] as hex, NaN/Infinity as strings. */
        Json typed(Object v) {
            begin();
            key("type").str(v == null ? null : v.getClass().getName());
            key("value");
            if (v == null) sb.append("null");
            else if (v instanceof Boolean b) sb.append(b);
            else if (v instanceof Byte || v instanceof Short || v instanceof Integer || v instanceof Long) sb.append(v);
            else if (v instanceof Float f && Float.isFinite(f)) sb.append(f);
            else if (v instanceof Double d && Double.isFinite(d)) sb.append(d);
            else if (v instanceof byte[] b) quote(hex(b));
            else quote(String.valueOf(v)); // String, Character, non-finite numbers
            return end();
        }

        private void quote(String s) {
            sb.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                switch (c) {
                    case '"' -> sb.append("\\\"");
                    case '\\' -> sb.append("\\\\");
                    case '\n' -> sb.append("\\n");
                    case '\r' -> sb.append("\\r");
                    case '\t' -> sb.append("\\t");
                    case '\b' -> sb.append("\\b");
                    case '\f' -> sb.append("\\f");
                    default -> {
                        // control characters must be escaped; non-ASCII is escaped to stay
                        // encoding-neutral (surrogate pairs come out as two \\u escapes)
                        if (c < 0x20 || c > 0x7e) sb.append(String.format("\\u%04x", (int) c));
                        else sb.append(c);
                    }
                }
            }
            sb.append('"');
        }

        @Override
        public String toString() {
            return sb.toString();
        }
    }
}
