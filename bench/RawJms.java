import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.DeliveryMode;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import java.io.BufferedReader;
import java.io.InputStreamReader;

/**
 * The baseline: the provider's own JMS client, used directly from Java, doing what
 * bench_throughput.py does through pyjms. It stays up for the whole benchmark and runs one
 * round per command, so its JIT warms up exactly as pyjms's JVM does (same untimed rounds).
 *
 * Usage: java -cp PROVIDER_JARS bench/RawJms.java FACTORY_CLASS URL
 * Then one command per stdin line, "MODE QUEUE N BODY_BYTES" with MODE sequential (send all,
 * then receive all) or pipelined (a consumer thread receives while the producer sends); each
 * answers "ok N SECONDS".
 */
public class RawJms {
    public static void main(String[] args) throws Exception {
        // ActiveMQ's, Artemis's and Qpid's factories all take the URL in a constructor
        ConnectionFactory factory = (ConnectionFactory) Class.forName(args[0])
                .getConstructor(String.class).newInstance(args[1]);
        try (Connection c = factory.createConnection()) {
            c.start();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
            for (String line; (line = in.readLine()) != null && !line.isBlank(); ) {
                String[] cmd = line.trim().split("\\s+");
                int n = Integer.parseInt(cmd[2]), size = Integer.parseInt(cmd[3]);
                double seconds = cmd[0].equals("pipelined")
                        ? pipelined(c, cmd[1], n, size) : sequential(c, cmd[1], n, size);
                System.out.printf("ok %d %.6f%n", n, seconds);
                System.out.flush();
            }
        }
    }

    static double sequential(Connection c, String queue, int n, int size) throws Exception {
        try (Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE)) {
            Queue q = s.createQueue(queue);
            MessageProducer p = producer(s, q);
            MessageConsumer consumer = s.createConsumer(q);
            String body = "x".repeat(size);
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) p.send(s.createTextMessage(body));
            drain(consumer, n, size);
            return (System.nanoTime() - t0) / 1e9;
        }
    }

    static double pipelined(Connection c, String queue, int n, int size) throws Exception {
        try (Session sending = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
             Session receiving = c.createSession(false, Session.AUTO_ACKNOWLEDGE)) {
            Queue q = sending.createQueue(queue);
            MessageProducer p = producer(sending, q);
            MessageConsumer consumer = receiving.createConsumer(q);
            String body = "x".repeat(size);
            Exception[] failed = new Exception[1];
            Thread receiver = new Thread(() -> {
                try {
                    drain(consumer, n, size);
                } catch (Exception e) {
                    failed[0] = e;
                }
            });
            long t0 = System.nanoTime();
            receiver.start();
            for (int i = 0; i < n; i++) p.send(sending.createTextMessage(body));
            receiver.join();
            if (failed[0] != null) throw failed[0];
            return (System.nanoTime() - t0) / 1e9;
        }
    }

    static MessageProducer producer(Session s, Queue q) throws Exception {
        MessageProducer p = s.createProducer(q);
        p.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
        return p;
    }

    static void drain(MessageConsumer consumer, int n, int size) throws Exception {
        long chars = 0;
        for (int got = 0; got < n; got++) {
            Message m = consumer.receive(10_000);
            if (m == null) throw new IllegalStateException("lost messages: got " + got + " of " + n);
            chars += ((TextMessage) m).getText().length();
        }
        if (chars != (long) n * size) throw new IllegalStateException("bad bodies");
    }
}
