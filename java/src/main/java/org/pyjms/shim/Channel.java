package org.pyjms.shim;

import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.Destination;
import jakarta.jms.IllegalStateException;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TemporaryQueue;
import jakarta.jms.TemporaryTopic;
import jakarta.jms.Topic;
import java.nio.ByteBuffer;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One JMS session on a (possibly shared) connection: what a Python JMSContext stands on.
 *
 * <p>AUTO_ACKNOWLEDGE and DUPS_OK_ACKNOWLEDGE contexts run on a CLIENT_ACKNOWLEDGE session and
 * acknowledge inside the shim, right after a receive returns or after a listener succeeded.
 * That lets receive_body leave a message it cannot convert unacknowledged, and lets a failing
 * listener have its message redelivered, as JMS 2.0 requires.
 *
 * <p>A listener's acknowledgement runs on the provider's delivery thread while the context's
 * own thread may be sending; sends, acknowledgements and transaction control are synchronized
 * on the channel, because a session may not be used by two threads at once (Artemis's client
 * loses track of its replies: measured, a send then timed out).
 */
public final class Channel implements AutoCloseable {
    /** A connection shared by sibling channels (JMSContext.createContext). */
    private static final class Shared {
        final Connection connection;
        final AtomicInteger users = new AtomicInteger(1);
        volatile boolean started;
        /** Why the connection broke, as the client told its exception listener; null while it holds. */
        volatile Throwable failure;
        Shared(Connection c) { connection = c; }
    }

    private final Provider provider;
    private final Shared shared;
    private final Session session;
    private final int sessionMode;
    final boolean ackInShim;
    private final MessageProducer producer;
    final Destinations destinations;
    private final SynchronousQueue<Object[]> listened = new SynchronousQueue<>();
    private final SynchronousQueue<Boolean> verdicts = new SynchronousQueue<>();
    private volatile boolean closed;
    private int nextReceiverId;
    /** The newest message consumed: acknowledging it acknowledges the whole session (JMS 2.0). */
    volatile Message lastConsumed;
    /**
     * INDIVIDUAL_ACKNOWLEDGE (Contract): each message's acknowledge() acknowledges it only, so
     * the channel keeps the messages consumed and not yet acknowledged, oldest first, to
     * acknowledge them all or those Python names (acknowledgeMessages). Guarded by itself.
     */
    final boolean individual;
    private final java.util.ArrayDeque<Message> unacknowledged = new java.util.ArrayDeque<>();
    /** Where this session quarantines poison (org.pyjms.shim.Poison), and the name it puts as. */
    private volatile String deadLetterQueue = "queue://" + Contract.DEAD_LETTER_QUEUE;
    private volatile String putApplName = "pyjms";

    private Channel(Provider provider, Shared shared, int sessionMode) throws JMSException {
        this.provider = provider;
        this.shared = shared;
        this.sessionMode = sessionMode;
        boolean transacted = sessionMode == Session.SESSION_TRANSACTED;
        // a client with JMS 2.0's receiveBody and listener redelivery does them itself
        this.ackInShim = (sessionMode == Session.AUTO_ACKNOWLEDGE || sessionMode == Session.DUPS_OK_ACKNOWLEDGE)
                && !provider.jms2Client();
        this.individual = sessionMode == Contract.INDIVIDUAL_ACKNOWLEDGE;
        if (individual && provider.individualAcknowledgeMode() < 0) {
            throw new UnsupportedOperationException(provider.name() + " has no individual acknowledge mode");
        }
        int underlying = transacted ? Session.SESSION_TRANSACTED
                : ackInShim ? Session.CLIENT_ACKNOWLEDGE
                : individual ? provider.individualAcknowledgeMode() : sessionMode;
        this.session = shared.connection.createSession(transacted, underlying);
        this.producer = session.createProducer(null);
        this.destinations = new Destinations(session, provider);
    }

    public static Channel open(Provider provider, ConnectionFactory factory, String user, String password,
                               String clientId, int sessionMode) throws JMSException {
        Connection c = user == null ? factory.createConnection() : factory.createConnection(user, password);
        try {
            if (clientId != null) c.setClientID(clientId);
            Shared shared = new Shared(c);
            // remembered so that a later call failing on the dead connection can say why (2009)
            c.setExceptionListener(e -> shared.failure = e);
            return new Channel(provider, shared, sessionMode);
        } catch (JMSException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    /** A new session on the same connection (JMSContext.createContext). */
    public Channel sibling(int sessionMode) throws JMSException {
        checkOpen();
        shared.users.incrementAndGet();
        try {
            return new Channel(provider, shared, sessionMode);
        } catch (JMSException | RuntimeException e) {
            shared.users.decrementAndGet();
            throw e;
        }
    }

    public String providerName() { return provider.name(); }

    /** Why the connection broke (the client's exception listener heard it), or null. */
    public Throwable connectionFailure() { return shared.failure; }

    /** Whether the connection has failed, as far as the client knows now. */
    public boolean connectionLost() {
        return shared.failure != null || provider.connectionLost(shared.connection);
    }

    public Provider provider() { return provider; }

    public Connection connection() { return shared.connection; }

    public Session session() { return session; }

    /** Resolves destination keys (queue://NAME, topic://NAME...) for this session. */
    public Destinations destinations() { return destinations; }

    public int sessionMode() { return sessionMode; }

    /** A message is consumed (handed to Python, or to a listener). */
    void consumed(Message m) {
        lastConsumed = m;
        if (individual) {
            synchronized (unacknowledged) { unacknowledged.add(m); }
        }
    }

    /**
     * A message consumed but never handed over (quarantined poison, an expired one) is
     * acknowledged here in the modes whose acknowledgements cover only what was handed over;
     * in the others the application's acknowledgement or commit covers it.
     */
    void acknowledgeUnhanded(Message m) throws JMSException {
        if (ackInShim) acknowledgeInShim(m);
        else if (individual) m.acknowledge();
    }

    /**
     * An AUTO_ACKNOWLEDGE or DUPS_OK_ACKNOWLEDGE context's acknowledgement of a message it
     * received; false if a failover rolled it back. The shim's CLIENT_ACKNOWLEDGE session is one
     * whose acknowledgements the client commits (Artemis's core session without autoCommitAcks):
     * after a failover the first commit of a session that had worked since its last one (a send
     * counts) rolls back and says so (AMQ219030). What it covered was not consumed: the broker
     * that took over delivers it again, so a receive goes on for it instead of failing for a
     * message its caller never saw. (An acknowledge the application calls still raises.)
     */
    boolean acknowledgeInShim(Message m) throws JMSException {
        try {
            m.acknowledge();
            return true;
        } catch (jakarta.jms.TransactionRolledBackException e) {
            return false;
        }
    }

    public String clientId() throws JMSException { return shared.connection.getClientID(); }

    public void setClientId(String id) throws JMSException { shared.connection.setClientID(id); }

    /** JMS 2.0 autostart: the connection starts when the first consumer is created. */
    public void start() throws JMSException {
        if (!shared.started) {
            shared.connection.start();
            shared.started = true;
        }
    }

    public void stop() throws JMSException {
        shared.connection.stop();
        shared.started = false;
    }

    public void checkOpen() throws IllegalStateException {
        if (closed) throw new IllegalStateException("the context is closed");
    }

    // ------------------------------------------------------------------ sending

    /** Send flags: which headers to skip, and how a nonzero delay is applied (Python chose). */
    public static final int NO_MESSAGE_ID = Contract.SEND_NO_MESSAGE_ID, NO_TIMESTAMP = Contract.SEND_NO_TIMESTAMP,
            DELAY_NATIVE = Contract.SEND_DELAY_NATIVE, DELAY_SCHEDULER = Contract.SEND_DELAY_SCHEDULER;
    /** Where the delivery time travels when the wire drops JMSDeliveryTime (OpenWire over tcp). */
    public static final String DELIVERY_TIME = Contract.DELIVERY_TIME;
    /** The send time of a scheduled message, whose JMSTimestamp a broker scheduler may reset. */
    public static final String SEND_TIME = Contract.SEND_TIME;
    /** The exact expiration (send time + TTL) of a scheduled message; receivers enforce it. */
    public static final String EXPIRATION = Contract.EXPIRATION;

    private long nativeDelay;

    private void configure(int flags) throws JMSException {
        boolean noId = (flags & NO_MESSAGE_ID) != 0, noTimestamp = (flags & NO_TIMESTAMP) != 0;
        if (producer.getDisableMessageID() != noId) producer.setDisableMessageID(noId);
        if (producer.getDisableMessageTimestamp() != noTimestamp) producer.setDisableMessageTimestamp(noTimestamp);
    }

    /** Applies a delivery delay by the mechanism Python chose, and records the delivery time.
     *  Returns the time-to-live to send with, so that expiration still counts from the send. */
    private long delay(Message m, long delayMs, long ttl, int flags) throws JMSException {
        // the session's one producer serves every JMSProducer: set the native delay per send
        long wanted = (flags & DELAY_NATIVE) != 0 ? delayMs : 0;
        if (nativeDelay != wanted) {
            producer.setDeliveryDelay(wanted);
            nativeDelay = wanted;
        }
        if (delayMs <= 0) return ttl;
        boolean scheduled = (flags & DELAY_SCHEDULER) != 0;
        boolean restamped = scheduled || (wanted > 0 && restampsDelayed());
        // a client that stamps JMSDeliveryTime itself and carries it is exact as it is; a time
        // recorded here would come from another reading of the clock than its JMSTimestamp
        if (!restamped && wanted > 0 && provider.carriesDeliveryTime()) return ttl;
        long now = System.currentTimeMillis();
        m.setLongProperty(DELIVERY_TIME, now + delayMs);
        if (!restamped) return ttl;
        m.setLongProperty(SEND_TIME, now);
        if (ttl > 0) m.setLongProperty(EXPIRATION, now + ttl);
        if (scheduled) return provider.schedule(m, delayMs, ttl);
        return ttl > 0 ? Math.max(1, ttl - delayMs) : ttl; // the broker counts the TTL again from delivery
    }

    private Boolean restamps; // provider.peerRestampsDelayed, asked once

    private boolean restampsDelayed() {
        if (restamps == null) restamps = provider.peerRestampsDelayed(shared.connection);
        return restamps;
    }

    private void sendOne(Destination d, Message m, int mode, int priority, long ttl, long delayMs, int flags)
            throws JMSException {
        long effectiveTtl = delay(m, delayMs, ttl, flags);
        producer.send(d, m, mode, priority, effectiveTtl);
    }

    /** Sends one record; the Python side applied every rule before this call. */
    public void send(String destination, byte[] record, int deliveryMode, int priority, long ttl, long delayMs,
                     int flags) throws JMSException {
        sendFromArea(ByteBuffer.wrap(record), record.length, destination, deliveryMode, priority, ttl, delayMs, flags);
    }

    /**
     * {@link #send} of the record Python wrote to the first {@code length} bytes of
     * {@code area}: a direct buffer over a Python bytearray (JPype's nio), so that a send
     * passes no byte[] made for it. Converting a Python bytes to a byte[] argument cost about
     * as much as the call itself, and grew with the record's size.
     */
    public synchronized void sendFromArea(ByteBuffer area, int length, String destination, int deliveryMode,
                                          int priority, long ttl, long delayMs, int flags) throws JMSException {
        checkOpen();
        configure(flags);
        Message m = Codec.decode(area.slice(0, length), session, destinations);
        sendOne(destinations.resolve(destination), m, deliveryMode, priority, ttl, delayMs, flags);
    }

    /** Sends one record and returns the header block the provider assigned (id, timestamp...). */
    public synchronized byte[] sendDescribed(String destination, byte[] record, int deliveryMode, int priority, long ttl,
                                long delayMs, int flags) throws JMSException {
        checkOpen();
        configure(flags);
        Message m = Codec.decode(ByteBuffer.wrap(record), session, destinations);
        sendOne(destinations.resolve(destination), m, deliveryMode, priority, ttl, delayMs, flags);
        Codec.Out out = new Codec.Out(128);
        Codec.encodeHeaders(m, out);
        return out.toByteArray();
    }

    /** Sends a packed batch (int count, then records) to one destination; returns the count. */
    public synchronized int sendBatch(String destination, byte[] batch, int deliveryMode, int priority, long ttl, long delayMs,
                         int flags) throws JMSException {
        checkOpen();
        configure(flags);
        Destination d = destinations.resolve(destination);
        ByteBuffer in = ByteBuffer.wrap(batch);
        int n = in.getInt();
        Runnable released = provider.holdWrites(session);
        try {
            for (int i = 0; i < n; i++) {
                sendOne(d, Codec.decode(in, session, destinations), deliveryMode, priority, ttl, delayMs, flags);
            }
        } finally {
            released.run();
        }
        return n;
    }

    /**
     * Sends a batch whose records each carry their own destination and options:
     * destination key, int deliveryMode, int priority, long ttl, long delay, then the record.
     */
    public synchronized int sendRouted(byte[] batch, int flags) throws JMSException {
        checkOpen();
        configure(flags);
        ByteBuffer in = ByteBuffer.wrap(batch);
        int n = in.getInt();
        Runnable released = provider.holdWrites(session);
        try {
            for (int i = 0; i < n; i++) {
                Destination d = destinations.resolve(Codec.readString(in));
                int mode = in.getInt(), priority = in.getInt();
                long ttl = in.getLong(), delayMs = in.getLong();
                sendOne(d, Codec.decode(in, session, destinations), mode, priority, ttl, delayMs, flags);
            }
        } finally {
            released.run();
        }
        return n;
    }

    // ------------------------------------------------------------------ the client's own async send

    /** Whether the client has JMS 2.0's async send and receiveBody (Provider.jms2Client). */
    public boolean jms2Client() { return provider.jms2Client(); }

    /** Whether the client sends with a CompletionListener itself (Provider.sendsAsync). */
    public boolean sendsAsync() { return provider.sendsAsync(); }

    /** Completed async sends, in completion order: {Long ticket, byte[] headers or null, Exception or null}. */
    private final java.util.concurrent.LinkedBlockingQueue<Object[]> completions =
            new java.util.concurrent.LinkedBlockingQueue<>();

    /**
     * Sends one record with the client's own CompletionListener, returning at once. The outcome
     * is queued for {@link #nextCompletion} under {@code ticket}: the header block the provider
     * assigned, or the exception. Pyjms never runs Python on the client's thread.
     */
    public synchronized void sendAsync(String destination, byte[] record, int deliveryMode, int priority, long ttl, long delayMs,
                          int flags, long ticket) throws JMSException {
        checkOpen();
        configure(flags);
        Message m = Codec.decode(ByteBuffer.wrap(record), session, destinations);
        long effectiveTtl = delay(m, delayMs, ttl, flags);
        producer.send(destinations.resolve(destination), m, deliveryMode, priority, effectiveTtl,
                new jakarta.jms.CompletionListener() {
                    @Override
                    public void onCompletion(Message sent) {
                        try {
                            Codec.Out out = new Codec.Out(128);
                            Codec.encodeHeaders(sent, out);
                            completions.add(new Object[] {ticket, out.toByteArray(), null});
                        } catch (JMSException | RuntimeException e) {
                            completions.add(new Object[] {ticket, null, e});
                        }
                    }

                    @Override
                    public void onException(Message sent, Exception e) {
                        completions.add(new Object[] {ticket, null, e});
                    }
                });
    }

    /** The next completed async send, or null after timeoutMs. */
    public Object[] nextCompletion(long timeoutMs) throws InterruptedException {
        return completions.poll(timeoutMs, TimeUnit.MILLISECONDS);
    }

    /**
     * Sends a copy of a received message on (body, properties, correlation id, type, reply-to,
     * priority, delivery mode), with no TTL. A copy, because a provider may restamp the very
     * object it sends (ActiveMQ gives it a new id), and the received one must still be
     * acknowledged by its own id.
     */
    public synchronized void forward(String queue, Message m) throws JMSException {
        Message copy = Codec.copy(m, session);
        producer.send(destinations.resolve("queue://" + queue), copy, m.getJMSDeliveryMode(), m.getJMSPriority(), 0);
    }

    /**
     * As forward, with {@code value} in the String property {@code name} of the copy (replacing
     * any value m carries there): the delay processor keeps who staged a message this way, as
     * the broker stamps the processor's own user on what it files (org.pyjms.shim.delay.SlotFiler).
     */
    public synchronized void forward(String queue, Message m, String name, String value) throws JMSException {
        Message copy = Codec.copy(m, session);
        copy.setStringProperty(name, value);
        producer.send(destinations.resolve("queue://" + queue), copy, m.getJMSDeliveryMode(), m.getJMSPriority(), 0);
    }

    /**
     * Forwards the message this session consumed last as pyjms.api.forward does, with a copy
     * made here from the message itself ({@link Codec#forwarded}: {@code block} holds the
     * application headers Python gives the copy and the properties it adds), so that its
     * properties do not cross back from Python. Returns false, having sent nothing, when the
     * message consumed last is not {@code messageId} (a batch's earlier message, or none) or
     * has a body pyjms does not copy: Python then sends its own copy.
     */
    public synchronized boolean forwardConsumed(String messageId, String destination, String[] drop, byte[] block,
                                                int deliveryMode, int priority, long ttl, int flags) throws JMSException {
        checkOpen();
        Message m = lastConsumed;
        if (m == null || messageId == null || !messageId.equals(m.getJMSMessageID())) return false;
        byte kind = Codec.kindOf(m);
        if (kind == Codec.KIND_OBJECT || kind == Codec.KIND_STREAM) return false;
        configure(flags);
        Message copy = Codec.forwarded(m, session, destinations, new java.util.HashSet<>(java.util.Arrays.asList(drop)),
                ByteBuffer.wrap(block));
        sendOne(destinations.resolve(destination), copy, deliveryMode, priority, ttl, 0, flags);
        return true;
    }

    /** The dead-letter queue (a destination key) this session quarantines poison to, and the
     *  PutApplName of their dead-letter headers (Python sets them from the provider plug-in). */
    public void setDeadLetterQueue(String key, String applName) {
        deadLetterQueue = key;
        putApplName = applName;
    }

    public String deadLetterQueue() { return deadLetterQueue; }

    public String putApplName() { return putApplName; }

    /** Messages this session has quarantined so far (Poison.quarantine), committed or not: a
     *  reader that counts them compares the figure before and after its transaction. */
    private volatile long quarantined;

    void countQuarantine() { quarantined++; }

    public long quarantinedCount() { return quarantined; }

    /** Sends a message made on this session as it is (Poison.quarantine). */
    synchronized void sendCopy(String key, Message m, int deliveryMode, int priority, long ttl) throws JMSException {
        if (nativeDelay != 0) {
            producer.setDeliveryDelay(0);
            nativeDelay = 0;
        }
        producer.send(destinations.resolve(key), m, deliveryMode, priority, ttl);
    }

    /** The queues on the broker whose names start with prefix (Provider.queueNames), or null. */
    public String queueNames(String prefix, long waitMs) throws JMSException {
        checkOpen();
        start(); // the broker's answer is a consumer's
        return provider.queueNames(shared.connection, prefix, waitMs);
    }

    /**
     * Those of the queues (names, one per line) that hold a message now, one per line: a
     * browse of each, opened a hundred at a time so that their answers overlap.
     */
    public String nonEmptyQueues(String names) throws JMSException {
        checkOpen();
        start();
        String[] all = names.isEmpty() ? new String[0] : names.split("\n");
        StringBuilder found = new StringBuilder();
        for (int from = 0; from < all.length; from += 100) {
            java.util.List<jakarta.jms.QueueBrowser> browsers = new java.util.ArrayList<>();
            try {
                for (int i = from; i < Math.min(all.length, from + 100); i++) {
                    browsers.add(session.createBrowser((jakarta.jms.Queue) destinations.resolve("queue://" + all[i])));
                }
                for (int i = 0; i < browsers.size(); i++) {
                    if (browsers.get(i).getEnumeration().hasMoreElements()) {
                        if (found.length() > 0) found.append('\n');
                        found.append(all[from + i]);
                    }
                }
            } finally {
                for (jakarta.jms.QueueBrowser b : browsers) b.close();
            }
        }
        return found.toString();
    }

    /** Whether the broker is known to run a scheduler the provider can use (false = unknown). */
    public boolean schedulerKnown() { return provider.schedulerKnownOn(shared.connection); }

    /** Whether the provider can mark a message for a broker scheduler at all (Provider.schedule). */
    public boolean schedulerMarkable() {
        try {
            provider.schedule(session.createMessage(), 1, 0); // a throwaway message, never sent
            return true;
        } catch (UnsupportedOperationException | JMSException none) {
            return false;
        }
    }

    /** Whether the provider's client implements JMS 2.0 setDeliveryDelay and the broker honours it. */
    public boolean supportsNativeDelay() {
        try {
            producer.setDeliveryDelay(producer.getDeliveryDelay());
        } catch (Throwable unsupported) {
            return false;
        }
        return provider.peerDelaysDelivery(shared.connection);
    }

    /** Whether the broker is known to honour the native delay it claims (false: probe it first). */
    public boolean nativeDelayKnown() { return provider.peerDelayKnown(shared.connection); }

    // ------------------------------------------------------------------ consuming

    public Receiver consumer(String destination, String selector, boolean noLocal) throws JMSException {
        checkOpen();
        start();
        MessageConsumer c = session.createConsumer(destinations.resolve(destination), selector, noLocal);
        return new Receiver(this, c, nextReceiverId++, null);
    }

    /** A consumer sent at most prefetch messages ahead (see Provider.prefetching): gets by token. */
    public Receiver prefetchingConsumer(String destination, String selector, int prefetch) throws JMSException {
        checkOpen();
        start();
        MessageConsumer c = session.createConsumer(provider.prefetching(destinations.resolve(destination), prefetch),
                selector, false);
        return new Receiver(this, c, nextReceiverId++, null);
    }

    public Receiver durableConsumer(String topic, String name, String selector, boolean noLocal)
            throws JMSException {
        checkOpen();
        if (shared.connection.getClientID() == null) {
            throw new IllegalStateException("a durable subscription needs a client id: set client_id on the factory or context");
        }
        start();
        MessageConsumer c = session.createDurableSubscriber((Topic) destinations.resolve(topic), name, selector, noLocal);
        return new Receiver(this, c, nextReceiverId++, null);
    }

    /**
     * JMS 2.0 shared subscriptions: the client's own (Artemis, Qpid JMS, IBM MQ), or where the
     * client lacks them (ActiveMQ Classic throws UnsupportedOperationException) an emulation:
     * consumers of one subscription share a queue that the broker feeds from the topic (see
     * SharedSubscriptions). A JMSException from a client that has them is the answer, not a
     * reason to emulate.
     */
    public Receiver sharedConsumer(String topic, String name, String selector, boolean durable) throws JMSException {
        checkOpen();
        Topic t = (Topic) destinations.resolve(topic);
        String lacking = provider.peerLacksSharedSubscriptions(shared.connection);
        if (lacking != null) throw new UnsupportedOperationException(lacking);
        start();
        try {
            MessageConsumer c = durable ? session.createSharedDurableConsumer(t, name, selector)
                    : session.createSharedConsumer(t, name, selector);
            return new Receiver(this, c, nextReceiverId++, null);
        } catch (UnsupportedOperationException unsupported) {
            // fall through to the emulation below
        }
        Queue q = SharedSubscriptions.queueFor(this, t, name);
        MessageConsumer c = session.createConsumer(q, selector);
        return new Receiver(this, c, nextReceiverId++, durable ? null : q);
    }

    public void unsubscribe(String name) throws JMSException {
        checkOpen();
        session.unsubscribe(name);
    }

    /** A browser; {@code ahead} > 0: one read in batches of that many (see Provider.browsing). */
    public Browser browser(String queue, String selector, int ahead) throws JMSException {
        checkOpen();
        start();
        Destination d = destinations.resolve(queue);
        Queue q = (Queue) (ahead > 0 ? provider.browsing(shared.connection, d, ahead) : d);
        return new Browser(provider.browse(() -> {
            try {
                return session.createBrowser(q, selector);
            } catch (JMSException e) {
                if (!provider.createdMeanwhile(e)) throw e;
                return session.createBrowser(q, selector); // it exists now (Provider.createdMeanwhile)
            }
        }));
    }

    public String createTemporaryQueue() throws JMSException {
        checkOpen();
        TemporaryQueue q = session.createTemporaryQueue();
        return Destinations.key(q);
    }

    public String createTemporaryTopic() throws JMSException {
        checkOpen();
        TemporaryTopic t = session.createTemporaryTopic();
        return Destinations.key(t);
    }

    public void deleteTemporary(String key) throws JMSException {
        Destination d = destinations.resolve(key);
        if (d instanceof TemporaryQueue q) q.delete();
        else if (d instanceof TemporaryTopic t) t.delete();
        Destinations.forget(d);
    }

    // ------------------------------------------------------------------ listeners

    /** Called on the provider's session thread: hand the message to Python and wait for its verdict. */
    void deliver(int receiverId, Message m) {
        try {
            Codec.PropertyNames names = Codec.PropertyNames.of(m);
            String[] poison = Poison.problem(m, names);
            if (poison != null) { // never handed to a listener: quarantined instead
                synchronized (this) {
                    Poison.quarantine(this, m, poison);
                    acknowledgeUnhanded(m);
                }
                return;
            }
            if (Receiver.expired(m, names)) { // never hand an expired message to a listener (E03)
                acknowledgeUnhanded(m);
                return;
            }
            Codec.Out out = new Codec.Out(256);
            out.putInt(receiverId);
            Codec.encode(m, out, names);
            byte[] record = out.toByteArray();
            // consumed from here on: a CLIENT_ACKNOWLEDGE listener's acknowledge() covers it
            consumed(m);
            while (!closed) {
                if (listened.offer(new Object[] {record}, 100, TimeUnit.MILLISECONDS)) break;
            }
            Boolean ok = null;
            while (!closed && ok == null) ok = verdicts.poll(100, TimeUnit.MILLISECONDS);
            if (closed) return;
            synchronized (this) { // the session is not used by a sending thread meanwhile
                if (ok) {
                    if (ackInShim) m.acknowledge();
                } else if (sessionMode != Session.SESSION_TRANSACTED) {
                    recoverSession();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (JMSException e) {
            // the provider redelivers an unacknowledged message; nothing is lost
        }
    }

    /** The next message for a listener (int receiver id, then the record), or null after the timeout. */
    public byte[] nextListened(long timeoutMs) throws InterruptedException {
        Object[] item = listened.poll(timeoutMs, TimeUnit.MILLISECONDS);
        return item == null ? null : (byte[]) item[0];
    }

    /** Python's verdict on the last listened message: true = processed, false = listener failed. */
    public void listenedDone(boolean ok) throws InterruptedException {
        verdicts.offer(ok, 5, TimeUnit.SECONDS);
    }

    // ------------------------------------------------------------------ session control

    /**
     * Commits. Whether the connection was known lost before the commit was tried is kept for
     * lostBeforeLastCommit: a failed commit on a connection lost before never left (nothing was
     * committed); one that failed otherwise is in doubt. Asked only when a commit fails, so a
     * commit costs one crossing. Returns quarantinedCount() as the commit left it, so that a
     * reader counting the poison its transactions quarantined needs no second crossing.
     */
    public synchronized long commit() throws JMSException {
        lostBeforeLastCommit = connectionLost(); // first: a channel closed by the failure throws next
        checkOpen();
        session.commit();
        return quarantined;
    }

    private volatile boolean lostBeforeLastCommit;

    /** Whether the connection was known lost when the last commit() was called. */
    public boolean lostBeforeLastCommit() { return lostBeforeLastCommit; }

    public synchronized void rollback() throws JMSException { checkOpen(); session.rollback(); }

    public synchronized void recover() throws JMSException { checkOpen(); recoverSession(); }

    /** The session hands back everything unacknowledged (so nothing is left to acknowledge). */
    private void recoverSession() throws JMSException {
        session.recover();
        if (individual) {
            synchronized (unacknowledged) { unacknowledged.clear(); }
        }
    }

    /**
     * CLIENT_ACKNOWLEDGE: acknowledges every message the session consumed; INDIVIDUAL_ACKNOWLEDGE:
     * every one it consumed and has not acknowledged yet.
     */
    public synchronized void acknowledge() throws JMSException {
        checkOpen();
        if (individual) {
            acknowledgeMessages(null);
            return;
        }
        Message m = lastConsumed;
        if (sessionMode == Session.CLIENT_ACKNOWLEDGE && m != null) m.acknowledge();
    }

    /**
     * INDIVIDUAL_ACKNOWLEDGE: acknowledges the consumed messages with these JMSMessageIDs (for
     * each id, the oldest unacknowledged message with it; a null id, the oldest without one), or
     * every one when {@code ids} is null. An id with no such message (acknowledged already, or
     * handed back by a recovery since) is passed over.
     */
    public synchronized void acknowledgeMessages(String[] ids) throws JMSException {
        checkOpen();
        if (!individual) throw new IllegalStateException("acknowledging single messages needs an INDIVIDUAL_ACKNOWLEDGE session");
        java.util.Map<String, Integer> wanted = null;
        int wantedWithoutId = 0;
        if (ids != null) {
            wanted = new java.util.HashMap<>();
            for (String id : ids) {
                if (id == null) wantedWithoutId++;
                else wanted.merge(id, 1, Integer::sum);
            }
        }
        java.util.List<Message> acknowledging = new java.util.ArrayList<>();
        synchronized (unacknowledged) {
            for (Message m : unacknowledged) {
                if (wanted != null) {
                    if (wantedWithoutId == 0 && wanted.isEmpty()) break;
                    String id = m.getJMSMessageID();
                    if (id == null) {
                        if (wantedWithoutId == 0) continue;
                        wantedWithoutId--;
                    } else {
                        Integer n = wanted.get(id);
                        if (n == null) continue;
                        if (n == 1) wanted.remove(id);
                        else wanted.put(id, n - 1);
                    }
                }
                acknowledging.add(m);
            }
        }
        if (acknowledging.isEmpty()) return;
        provider.acknowledgeEach(session, acknowledging);
        // only once acknowledged: a failed acknowledgement leaves them to the next one
        java.util.Set<Message> done = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        done.addAll(acknowledging);
        synchronized (unacknowledged) { unacknowledged.removeIf(done::contains); }
    }

    @Override
    public void close() throws JMSException {
        if (closed) return;
        if (individual && !connectionLost()) {
            // what was consumed and not acknowledged goes back marked redelivered, as a
            // CLIENT_ACKNOWLEDGE session's close hands it back (Artemis's client hands back an
            // individual acknowledge session's unacknowledged messages as never delivered)
            try {
                synchronized (this) { recoverSession(); }
            } catch (JMSException e) {
                // the close hands them back all the same
            }
        }
        closed = true;
        try {
            session.close();
        } finally {
            if (shared.users.decrementAndGet() == 0) shared.connection.close();
        }
    }

    public boolean isClosed() { return closed; }
}
