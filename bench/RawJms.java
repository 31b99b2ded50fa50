import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.DeliveryMode;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.QueueBrowser;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The baseline of every bench: the provider's own JMS client, used directly from Java, doing
 * what the bench does through pyjms. It stays up for the whole benchmark and runs one round per
 * command, so its JIT warms up as pyjms's JVM does (the benches give both the same untimed
 * rounds). bench/raw_java.py starts it with the JVM options pyjms's own JVM gets.
 *
 * Usage: java -cp PROVIDER_JARS bench/RawJms.java FACTORY_CLASS URL
 * Then one command per stdin line; each answers "ok N SECONDS" (N messages in SECONDS, timed
 * inside this JVM) or "error WHAT":
 *   reconnect                     close the connection and open a new one (answers "ok 0 0")
 *   sequential Q N SIZE           send N non-persistent SIZE-character texts, then receive them
 *   pipelined Q N SIZE            the same, a consumer thread receiving while the producer sends
 *   acked Q N SIZE EVERY          sequential with a CLIENT_ACKNOWLEDGE session, acknowledging
 *                                 every EVERY messages received (and the rest at the end)
 *   send Q N SIZE DELIVERY        one producer sends N texts (DELIVERY persistent|non-persistent)
 *   receive Q N SIZE              one auto-acknowledge consumer receives N texts of SIZE characters
 *   browse Q N                    one QueueBrowser counts the queue's messages; N expected
 *   drain Q N CONSUMERS TX        CONSUMERS threads, each with a connection and a transacted
 *                                 session of its own, receive N messages in all, each committing
 *                                 every TX of its messages (a negative TX: a CLIENT_ACKNOWLEDGE
 *                                 session instead, acknowledging every -TX)
 *   move SRC DST N CONSUMERS TX   the same, each message also sent on to DST in the transaction
 *                                 that gets it (delivery mode and priority kept)
 *   bytoken Q N TX                the design of a get by token, without marks: a QueueBrowser
 *                                 pass reads up to 400 message ids, then each TX of them is got
 *                                 by a consumer selecting exactly those ids (JMSMessageID IN ...)
 *                                 in a transacted session, committed and closed; until N are got
 */
public class RawJms {
    static final int WAIT_MS = 10_000; // no message for this long: lost messages

    public static void main(String[] args) throws Exception {
        // ActiveMQ's, Artemis's and Qpid's factories all take the URL in a constructor
        ConnectionFactory factory = (ConnectionFactory) Class.forName(args[0])
                .getConstructor(String.class).newInstance(args[1]);
        Connection c = connect(factory);
        try {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
            for (String line; (line = in.readLine()) != null && !line.isBlank(); ) {
                String[] cmd = line.trim().split("\\s+");
                String reply;
                try {
                    if (cmd[0].equals("reconnect")) {
                        c.close();
                        c = connect(factory);
                        reply = "ok 0 0";
                    } else {
                        int n = Integer.parseInt(cmd[cmd[0].equals("move") ? 3 : 2]);
                        reply = String.format("ok %d %.6f", n, run(factory, c, cmd, n));
                    }
                } catch (Exception e) {
                    reply = "error " + (e.getMessage() == null ? e.toString() : e.getMessage()).replace('\n', ' ');
                }
                System.out.println(reply);
                System.out.flush();
            }
        } finally {
            c.close();
        }
    }

    static Connection connect(ConnectionFactory factory) throws Exception {
        Connection c = factory.createConnection();
        c.start();
        return c;
    }

    static double run(ConnectionFactory factory, Connection c, String[] cmd, int n) throws Exception {
        switch (cmd[0]) {
            case "sequential": return sequential(c, cmd[1], n, Integer.parseInt(cmd[3]));
            case "pipelined": return pipelined(c, cmd[1], n, Integer.parseInt(cmd[3]));
            case "acked": return sequential(c, cmd[1], n, Integer.parseInt(cmd[3]), Integer.parseInt(cmd[4]));
            case "send": return send(c, cmd[1], n, Integer.parseInt(cmd[3]), deliveryMode(cmd[4]));
            case "receive": return receive(c, cmd[1], n, Integer.parseInt(cmd[3]));
            case "browse": return browse(c, cmd[1], n);
            case "drain": return consume(factory, cmd[1], null, n, Integer.parseInt(cmd[3]), Integer.parseInt(cmd[4]));
            case "move": return consume(factory, cmd[1], cmd[2], n, Integer.parseInt(cmd[4]), Integer.parseInt(cmd[5]));
            case "bytoken": return byToken(c, cmd[1], n, Integer.parseInt(cmd[3]));
            default: throw new IllegalArgumentException("unknown command " + cmd[0]);
        }
    }

    static int deliveryMode(String name) {
        switch (name) {
            case "persistent": return DeliveryMode.PERSISTENT;
            case "non-persistent": return DeliveryMode.NON_PERSISTENT;
            default: throw new IllegalArgumentException("delivery mode " + name + ": persistent or non-persistent");
        }
    }

    static double sequential(Connection c, String queue, int n, int size) throws Exception {
        return sequential(c, queue, n, size, 0);
    }

    /** every > 0: a CLIENT_ACKNOWLEDGE session acknowledging every that many messages received. */
    static double sequential(Connection c, String queue, int n, int size, int every) throws Exception {
        try (Session s = every > 0 ? c.createSession(false, Session.CLIENT_ACKNOWLEDGE)
                : c.createSession(false, Session.AUTO_ACKNOWLEDGE)) {
            Queue q = s.createQueue(queue);
            MessageProducer p = producer(s, q, DeliveryMode.NON_PERSISTENT);
            MessageConsumer consumer = s.createConsumer(q);
            String body = "x".repeat(size);
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) p.send(s.createTextMessage(body));
            drain(consumer, n, size, every);
            return (System.nanoTime() - t0) / 1e9;
        }
    }

    static double pipelined(Connection c, String queue, int n, int size) throws Exception {
        try (Session sending = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
             Session receiving = c.createSession(false, Session.AUTO_ACKNOWLEDGE)) {
            Queue q = sending.createQueue(queue);
            MessageProducer p = producer(sending, q, DeliveryMode.NON_PERSISTENT);
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

    static double send(Connection c, String queue, int n, int size, int mode) throws Exception {
        try (Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE)) {
            MessageProducer p = producer(s, s.createQueue(queue), mode);
            String body = "x".repeat(size);
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) p.send(s.createTextMessage(body));
            return (System.nanoTime() - t0) / 1e9;
        }
    }

    static double receive(Connection c, String queue, int n, int size) throws Exception {
        try (Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE)) {
            long t0 = System.nanoTime();
            drain(s.createConsumer(s.createQueue(queue)), n, size);
            return (System.nanoTime() - t0) / 1e9;
        }
    }

    static double browse(Connection c, String queue, int n) throws Exception {
        try (Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE)) {
            long t0 = System.nanoTime();
            int seen = 0;
            try (QueueBrowser b = s.createBrowser(s.createQueue(queue))) {
                for (Enumeration<?> e = b.getEnumeration(); e.hasMoreElements(); e.nextElement()) seen++;
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            if (seen != n) throw new IllegalStateException("browsed " + seen + " messages of " + n);
            return seconds;
        }
    }

    static double byToken(Connection c, String queue, int n, int tx) throws Exception {
        try (Session browsing = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
             Session getting = c.createSession(true, Session.SESSION_TRANSACTED)) {
            Queue q = browsing.createQueue(queue);
            long t0 = System.nanoTime();
            int got = 0;
            while (got < n) {
                List<String> ids = new ArrayList<>();
                try (QueueBrowser b = browsing.createBrowser(q)) {
                    for (Enumeration<?> e = b.getEnumeration(); e.hasMoreElements() && ids.size() < 400; ) {
                        ids.add(((Message) e.nextElement()).getJMSMessageID());
                    }
                }
                if (ids.isEmpty()) throw new IllegalStateException("lost messages: got " + got + " of " + n);
                for (int i = 0; i < ids.size(); i += tx) {
                    List<String> part = ids.subList(i, Math.min(i + tx, ids.size()));
                    try (MessageConsumer consumer = getting.createConsumer(
                            q, "JMSMessageID IN ('" + String.join("','", part) + "')")) {
                        for (int j = 0; j < part.size(); j++) {
                            if (consumer.receive(WAIT_MS) == null) throw new IllegalStateException("lost " + part.get(j));
                            got++;
                        }
                        getting.commit();
                    }
                }
            }
            return (System.nanoTime() - t0) / 1e9;
        }
    }

    /** drain (to == null) or move: CONSUMERS threads get N messages in all, in transactions of TX. */
    static double consume(ConnectionFactory factory, String from, String to, int n, int consumers, int tx)
            throws Exception {
        // connections first (they prefetch nothing); sessions and consumers are part of the time
        List<Connection> connections = new ArrayList<>();
        try {
            for (int i = 0; i < consumers; i++) {
                Connection c = factory.createConnection();
                connections.add(c);
                c.start();
            }
            AtomicInteger left = new AtomicInteger(n);
            AtomicLong lastProgress = new AtomicLong(System.nanoTime()); // any thread's last message
            Exception[] failed = new Exception[1];
            List<Thread> threads = new ArrayList<>();
            long t0 = System.nanoTime();
            for (Connection c : connections) {
                Thread t = new Thread(() -> {
                    try {
                        consumeShare(c, from, to, left, lastProgress, tx);
                    } catch (Exception e) {
                        synchronized (failed) {
                            failed[0] = e;
                        }
                    }
                });
                threads.add(t);
                t.start();
            }
            for (Thread t : threads) t.join();
            double seconds = (System.nanoTime() - t0) / 1e9;
            if (failed[0] != null) throw failed[0];
            return seconds;
        } finally {
            for (Connection c : connections) c.close();
        }
    }

    /**
     * One consumer's share: receives until N are received in all, committing every TX of its
     * own; a negative TX: in a CLIENT_ACKNOWLEDGE session, acknowledging every -TX instead.
     */
    static void consumeShare(
            Connection c, String from, String to, AtomicInteger left, AtomicLong lastProgress, int tx)
            throws Exception {
        boolean acks = tx < 0;
        int every = Math.abs(tx);
        try (Session s = acks ? c.createSession(false, Session.CLIENT_ACKNOWLEDGE) : c.createSession(true, Session.SESSION_TRANSACTED)) {
            MessageConsumer consumer = s.createConsumer(s.createQueue(from));
            MessageProducer p = to == null ? null : s.createProducer(s.createQueue(to));
            int pending = 0;
            Message last = null;
            while (left.get() > 0) {
                Message m = consumer.receive(100); // short: another thread may take the last ones
                if (m == null) {
                    if ((System.nanoTime() - lastProgress.get()) / 1_000_000 > WAIT_MS) {
                        throw new IllegalStateException("lost messages: " + left.get() + " never came");
                    }
                    continue;
                }
                lastProgress.set(System.nanoTime());
                if (p != null) p.send(m, m.getJMSDeliveryMode(), m.getJMSPriority(), 0);
                left.decrementAndGet();
                last = m;
                if (++pending == every) {
                    if (acks) last.acknowledge(); else s.commit();
                    pending = 0;
                }
            }
            if (pending > 0) {
                if (acks) last.acknowledge(); else s.commit();
            }
        }
    }

    static MessageProducer producer(Session s, Queue q, int mode) throws Exception {
        MessageProducer p = s.createProducer(q);
        p.setDeliveryMode(mode);
        return p;
    }

    static void drain(MessageConsumer consumer, int n, int size) throws Exception {
        drain(consumer, n, size, 0);
    }

    /** every > 0: acknowledges every that many messages, and the rest at the end. */
    static void drain(MessageConsumer consumer, int n, int size, int every) throws Exception {
        long chars = 0;
        Message m = null;
        for (int got = 0; got < n; got++) {
            m = consumer.receive(WAIT_MS);
            if (m == null) throw new IllegalStateException("lost messages: got " + got + " of " + n);
            chars += ((TextMessage) m).getText().length();
            if (every > 0 && (got + 1) % every == 0) m.acknowledge();
        }
        if (every > 0 && m != null && n % every != 0) m.acknowledge();
        if (chars != (long) n * size) throw new IllegalStateException("bad bodies");
    }
}
