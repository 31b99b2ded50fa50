package org.pyjms.shim.amqp;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.QueueBrowser;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.pyjms.shim.BrowseCursor;

/**
 * A browse over Qpid JMS that goes on through another browser when its peer leaves a drain
 * unanswered. Qpid JMS's browser asks for more with a drain whenever what it holds runs out,
 * so every pass drains at least twice on one link: once for the messages, once more to learn
 * that there are none. Artemis (2.55) drops a drain that reaches it while it is still
 * completing the previous drain of the link (ProtonServerSenderContext: the drained flow is
 * flushed before its {@code draining} flag is cleared), and Qpid JMS then waits
 * amqp.drainTimeout (60 s) before it ends the browse. A loop of browse passes of a 3-message
 * queue met it about once in 3,500 passes.
 *
 * <p>So a step of the enumeration that has not answered within {@link #STALL_MS} (a watcher
 * thread looks every {@link #LOOK_EVERY_MS}) has its browser closed (Qpid JMS then ends the
 * wait), and the pass goes on through another browser, which starts from the head of the
 * queue: the messages this pass has returned already are skipped, by JMSMessageID. A step that
 * was slow, not stalled, costs the same re-read, and no message is lost or returned twice.
 * After {@link #MOST_RESUMES} resumes a pass waits as Qpid JMS does.
 */
final class ResumingBrowse implements BrowseCursor {
    /** How long one step may wait before its drain counts as lost: ample for an answer. */
    static final long STALL_MS = 1_000;
    /** Resumes of one pass before it waits as Qpid JMS does (a peer that is only slow). */
    static final int MOST_RESUMES = 3;
    /** How often the watcher looks at the steps under way. */
    static final long LOOK_EVERY_MS = 200;
    private static final long STALL_NANOS = TimeUnit.MILLISECONDS.toNanos(STALL_MS);
    /** {@link #stepStarted} between steps, and once the watcher has cut the step under way. */
    private static final long IDLE = Long.MIN_VALUE, CUT = Long.MIN_VALUE + 1;

    private static final Logger LOG = LogManager.getLogger(ResumingBrowse.class);
    /** The open browses, which one watcher thread looks at: a timer set for each step took a
     *  third off a browse's speed (it woke a thread for every message). */
    private static final Set<ResumingBrowse> OPEN = ConcurrentHashMap.newKeySet();
    /** Started when the class loads: at the first AMQP browse of the JVM. */
    private static final ScheduledExecutorService WATCHER = startWatcher();

    private final Opener opener;
    private volatile QueueBrowser browser;
    private Enumeration<?> messages;
    /** When the step under way began (System.nanoTime), IDLE, or CUT: the step and the
     *  watcher settle by compareAndSet which of them ends it. */
    private final AtomicLong stepStarted = new AtomicLong(IDLE);
    /** The JMSMessageIDs this pass returned: a resumed browse skips them. */
    private final Set<String> returned = new HashSet<>();
    private volatile int resumes;

    ResumingBrowse(Opener opener) throws JMSException {
        this.opener = opener;
        this.browser = opener.open();
        OPEN.add(this);
    }

    @Override
    public Message next() throws JMSException {
        while (true) {
            Message m = step();
            if (m == null) return null;
            String id = m.getJMSMessageID();
            if (id == null || returned.add(id)) return m; // a resumed browse meets the rest again
        }
    }

    /** The enumeration's next message, or null at its end; resumes a stalled one. */
    private Message step() throws JMSException {
        while (true) {
            if (messages == null) messages = browser.getEnumeration();
            stepStarted.set(System.nanoTime());
            boolean more;
            long ended;
            try {
                more = messages.hasMoreElements();
            } finally {
                ended = stepStarted.getAndSet(IDLE);
            }
            if (ended != CUT) return more ? (Message) messages.nextElement() : null;
            // the watcher closed this step's browser (a message it may have held is read again)
            resumes++;
            LOG.info("a browse step waited over {} ms for its AMQP peer (a drain left unanswered): browsing again "
                    + "from the head of the queue, skipping the {} message(s) returned (resume {} of {})",
                    STALL_MS, returned.size(), resumes, MOST_RESUMES);
            browser = opener.open();
            messages = null;
        }
    }

    @Override
    public void close() throws JMSException {
        OPEN.remove(this);
        browser.close();
    }

    private static ScheduledExecutorService startWatcher() {
        ScheduledExecutorService watcher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "pyjms-amqp-browse-watch");
            t.setDaemon(true);
            return t;
        });
        watcher.scheduleWithFixedDelay(ResumingBrowse::look, LOOK_EVERY_MS, LOOK_EVERY_MS, TimeUnit.MILLISECONDS);
        return watcher;
    }

    /** On the watcher: closes the browser of each step that has waited over STALL_MS. */
    private static void look() {
        long now = System.nanoTime();
        for (ResumingBrowse b : OPEN) {
            long started = b.stepStarted.get();
            if (started == IDLE || started == CUT || b.resumes >= MOST_RESUMES) continue;
            if (now - started < STALL_NANOS) continue;
            // read before the cut: the step replaces its browser only once it sees the cut
            QueueBrowser stalled = b.browser;
            if (b.stepStarted.compareAndSet(started, CUT)) closeQuietly(stalled);
        }
    }

    private static void closeQuietly(QueueBrowser b) {
        try {
            b.close(); // Qpid JMS's wait for the drain ends with the link
        } catch (JMSException | RuntimeException e) {
            LOG.debug("closing a stalled browser", e);
        }
    }
}
