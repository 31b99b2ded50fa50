import jakarta.jms.Connection;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Session;
import org.apache.activemq.ActiveMQConnectionFactory;

/**
 * The baseline for bench_browse.py: a plain Java JMS consumer draining a queue in a transacted
 * session, committing every K messages, with no browsing or marking. Prints "raw_drain N seconds".
 *
 * Usage: java -cp ACTIVEMQ_JARS bench/RawJmsDrain.java URL QUEUE N K
 */
public class RawJmsDrain {
    public static void main(String[] args) throws Exception {
        String url = args[0], queueName = args[1];
        int n = Integer.parseInt(args[2]), k = Integer.parseInt(args[3]);
        try (Connection c = new ActiveMQConnectionFactory(url).createConnection()) {
            c.start();
            Session s = c.createSession(true, Session.SESSION_TRANSACTED);
            MessageConsumer consumer = s.createConsumer(s.createQueue(queueName));
            long t0 = System.nanoTime();
            for (int i = 1; i <= n; i++) {
                if (consumer.receive(10000) == null) throw new IllegalStateException("lost messages: got " + (i - 1));
                if (i % k == 0 || i == n) s.commit();
            }
            System.out.println("raw_drain " + n + " " + (System.nanoTime() - t0) / 1e9);
        }
    }
}
