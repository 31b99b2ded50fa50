package org.pyjms.shim.amqp;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.QueueBrowser;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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
 * <p>So a step of the enumeration that has not answered within {@link #STALL_MS} closes its
 * browser (Qpid JMS then ends the wait) and opens another, which starts from the head of the
 * queue: the messages this pass has returned already are skipped, by JMSMessageID. A step that
 * was slow, not stalled, costs the same re-read, and no message is lost or returned twice.
 * After {@link #MOST_RESUMES} resumes a pass waits as Qpid JMS does.
 */
final class ResumingBrowse implements BrowseCursor {
    /** How long one step may wait before its drain counts as lost: ample for an answer. */
    static final long STALL_MS = 1_000;
    /** Resumes of one pass before it waits as Qpid JMS does (a peer that is only slow). */
    static final int MOST_RESUMES = 3;

    private static final Logger LOG = LogManager.getLogger(ResumingBrowse.class);
    private static final ScheduledThreadPoolExecutor WATCH = watcher();

    private final Opener opener;
    private QueueBrowser browser;
    private Enumeration<?> messages;
    /** The JMSMessageIDs this pass returned: a resumed browse skips them. */
    private final Set<String> returned = new HashSet<>();
    private int resumes;

    ResumingBrowse(Opener opener) throws JMSException {
        this.opener = opener;
        this.browser = opener.open();
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
            QueueBrowser watched = browser;
            AtomicBoolean cut = new AtomicBoolean();
            ScheduledFuture<?> watch = resumes >= MOST_RESUMES ? null : WATCH.schedule(() -> {
                cut.set(true);
                closeQuietly(watched); // Qpid JMS's wait for the drain ends with the link
            }, STALL_MS, TimeUnit.MILLISECONDS);
            boolean more;
            try {
                more = messages.hasMoreElements();
            } finally {
                if (watch != null) watch.cancel(false);
            }
            if (!cut.get()) return more ? (Message) messages.nextElement() : null;
            resumes++;
            LOG.info("a browse step waited over {} ms for its AMQP peer (a drain left unanswered): browsing again "
                    + "from the head of the queue, skipping the {} message(s) returned (resume {} of {})",
                    STALL_MS, returned.size(), resumes, MOST_RESUMES);
            closeQuietly(watched);
            browser = opener.open();
            messages = null;
        }
    }

    @Override
    public void close() throws JMSException { browser.close(); }

    private static void closeQuietly(QueueBrowser b) {
        try {
            b.close();
        } catch (JMSException | RuntimeException e) {
            LOG.debug("closing a stalled browser", e);
        }
    }

    private static ScheduledThreadPoolExecutor watcher() {
        ScheduledThreadPoolExecutor w = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "pyjms-amqp-browse-watch");
            t.setDaemon(true);
            return t;
        });
        w.setRemoveOnCancelPolicy(true); // a step that answered leaves nothing queued
        return w;
    }
}
