import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import org.apache.activemq.ActiveMQConnectionFactory;

/**
 * The baseline for bench_spark.py: a plain Java JMS client, one producer in one thread, sending
 * N non-persistent text messages to a queue as fast as it can, then one consumer draining them.
 * Prints one line: "raw_java_send N send_s receive_s".
 *
 * Usage: java -cp ACTIVEMQ_JARS bench/RawJmsSend.java URL QUEUE N BODY_BYTES
 */
public class RawJmsSend {
    public static void main(String[] args) throws Exception {
        String url = args[0], queueName = args[1];
        int n = Integer.parseInt(args[2]), size = Integer.parseInt(args[3]);
        ActiveMQConnectionFactory factory = new ActiveMQConnectionFactory(url);
        try (Connection c = factory.createConnection()) {
            c.start();
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue q = s.createQueue(queueName);
            MessageProducer p = s.createProducer(q);
            p.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
            MessageConsumer consumer = s.createConsumer(q);
            String pad = "x".repeat(Math.max(0, size - 10));
            // warm-up, not timed
            for (int i = 0; i < 5000; i++) p.send(s.createTextMessage(String.format("%010d", i) + pad));
            for (int i = 0; i < 5000; i++) consumer.receive(5000);
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) p.send(s.createTextMessage(String.format("%010d", i) + pad));
            long t1 = System.nanoTime();
            long chars = 0;
            for (int got = 0; got < n; got++) {
                Message m = consumer.receive(30000);
                if (m == null) throw new IllegalStateException("lost messages: got " + got + " of " + n);
                chars += ((TextMessage) m).getText().length();
            }
            long t2 = System.nanoTime();
            if (chars != (long) n * size) throw new IllegalStateException("bad bodies");
            System.out.printf("raw_java_send %d %.4f %.4f%n", n, (t1 - t0) / 1e9, (t2 - t1) / 1e9);
        }
    }
}
