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
 * The baseline: a plain Java JMS client on the same broker, doing what bench_throughput.py
 * does through pyjms. Prints one line: "raw_java N send_s receive_s".
 *
 * Usage: java -cp ACTIVEMQ_JARS bench/RawJms.java URL QUEUE N BODY_BYTES
 */
public class RawJms {
    public static void main(String[] args) throws Exception {
        String url = args[0], queueName = args[1];
        int n = Integer.parseInt(args[2]), size = Integer.parseInt(args[3]);
        String body = "x".repeat(size);
        ActiveMQConnectionFactory factory = new ActiveMQConnectionFactory(url);
        try (Connection c = factory.createConnection()) {
            c.start();
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue q = s.createQueue(queueName);
            MessageProducer p = s.createProducer(q);
            p.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
            MessageConsumer consumer = s.createConsumer(q);
            // warm-up, not timed
            for (int i = 0; i < 2000; i++) p.send(s.createTextMessage(body));
            for (int i = 0; i < 2000; i++) consumer.receive(5000);
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) p.send(s.createTextMessage(body));
            long t1 = System.nanoTime();
            int got = 0;
            long chars = 0;
            while (got < n) {
                Message m = consumer.receive(10000);
                if (m == null) throw new IllegalStateException("lost messages: got " + got + " of " + n);
                chars += ((TextMessage) m).getText().length();
                got++;
            }
            long t2 = System.nanoTime();
            if (chars != (long) n * size) throw new IllegalStateException("bad bodies");
            System.out.printf("raw_java %d %.4f %.4f%n", n, (t1 - t0) / 1e9, (t2 - t1) / 1e9);
        }
    }
}
