package org.pyjms.shim.activemq;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.QueueBrowser;
import java.lang.reflect.Field;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.activemq.ActiveMQMessageConsumer;
import org.apache.activemq.ActiveMQPrefetchPolicy;
import org.apache.activemq.ActiveMQQueueBrowser;
import org.apache.activemq.ActiveMQSession;
import org.apache.activemq.command.ActiveMQDestination;
import org.apache.activemq.command.ConsumerId;
import org.apache.activemq.command.MessageDispatch;
import org.pyjms.shim.BrowseCursor;

/**
 * A browse over ActiveMQ Classic that looks whether the broker has ended it before it looks
 * for a message. ActiveMQ's own (ActiveMQQueueBrowser.hasMoreElements, 6.3.1) looks the other
 * way round, and ends a browse with messages unread when they and the end arrive between its
 * two looks: about once in 40,000 passes of a 3-message queue under load; with a 1 ms pause
 * between the looks, 1,608 of 2,000 passes. The broker sends the end after every message of
 * the browse, and the session's dispatch thread hands them over in that order, so an end seen
 * before an empty look means that nothing more is coming.
 *
 * <p>It takes over the browser the opener made (never enumerated, so its consumer id is
 * unused): ActiveMQ's browser keeps its session and consumer id to itself, hence the
 * reflection. Its consumer is made as ActiveMQ's browser makes it, and on its end a transacted
 * session is committed as ActiveMQ's browser commits it.
 */
final class EndFirstBrowse implements BrowseCursor {
    /** ActiveMQ's browser's fields this reads (null: this activemq-client has no such field). */
    private static final Field SESSION = field("session"), CONSUMER_ID = field("consumerId");
    /** How long one wait for the broker lasts before it looks again (ActiveMQ's: 2 s). */
    private static final long WAIT_MS = 2_000;
    /** A pause between the two looks, for a test that widens the window ActiveMQ's browser
     *  loses messages in (tests/integration/test_activemq_browse_end.py); 0 otherwise. */
    static volatile long pauseBetweenLooksMs;

    private final ActiveMQQueueBrowser opened;
    private final ActiveMQSession session;
    /** Read by a test: the prefetch the broker was asked for. */
    final ActiveMQMessageConsumer consumer;
    private final AtomicBoolean ended = new AtomicBoolean();
    private final Object arrivals = new Object();
    private boolean closed;

    EndFirstBrowse(QueueBrowser browser) throws JMSException {
        this.opened = (ActiveMQQueueBrowser) browser;
        if (SESSION == null || CONSUMER_ID == null) {
            browser.close();
            throw new jakarta.jms.IllegalStateException("this activemq-client's ActiveMQQueueBrowser has no field "
                    + (SESSION == null ? "session" : "consumerId") + ", which pyjms's ActiveMQ browse reads"
                    + " (activemq-client 6.3.1, the version pyjms locks, has it): browse with that version");
        }
        boolean made = false;
        try {
            this.session = (ActiveMQSession) SESSION.get(opened);
            ConsumerId id = (ConsumerId) CONSUMER_ID.get(opened);
            ActiveMQPrefetchPolicy policy = session.getConnection().getPrefetchPolicy();
            this.consumer = new ActiveMQMessageConsumer(session, id, (ActiveMQDestination) opened.getQueue(), null,
                    opened.getMessageSelector(), policy.getQueueBrowserPrefetch(), policy.getMaximumPendingMessageLimit(),
                    false, true, session.isAsyncDispatch(), null) {
                @Override
                public void dispatch(MessageDispatch md) {
                    if (md.getMessage() == null) ended.set(true); // the broker's end of the browse
                    else super.dispatch(md);
                    synchronized (arrivals) { arrivals.notifyAll(); }
                }
            };
            made = true;
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("ActiveMQ's QueueBrowser changed: " + e, e);
        } finally {
            if (!made) browser.close(); // the browse fails as a whole: nothing of it stays open
        }
    }

    @Override
    public Message next() throws JMSException {
        if (closed) return null;
        while (true) {
            boolean endSeen = ended.get(); // first: every message of the browse came before it
            if (pauseBetweenLooksMs > 0) pause();
            Message m = consumer.receiveNoWait();
            if (m != null) return m;
            if (endSeen || !session.isRunning()) {
                end();
                return null;
            }
            synchronized (arrivals) {
                if (!ended.get() && consumer.getMessageSize() == 0) {
                    try {
                        arrivals.wait(WAIT_MS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new jakarta.jms.JMSException("interrupted while browsing");
                    }
                }
            }
        }
    }

    private static void pause() {
        try {
            Thread.sleep(pauseBetweenLooksMs);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** As ActiveMQQueueBrowser's destroyConsumer. */
    private void end() throws JMSException {
        if (closed) return;
        closed = true;
        if (session.getTransacted() && session.getTransactionContext().isInLocalTransaction()) session.commit();
        consumer.close();
    }

    @Override
    public void close() throws JMSException {
        try {
            end();
        } finally {
            opened.close();
        }
    }

    /** A field of ActiveMQ's browser, or null: a failure here would fail the class's
     *  initialisation, an error no browse could explain; the constructor says what is missing. */
    private static Field field(String name) {
        try {
            Field f = ActiveMQQueueBrowser.class.getDeclaredField(name);
            f.setAccessible(true);
            return f;
        } catch (NoSuchFieldException | RuntimeException e) {
            return null;
        }
    }
}
