package org.pyjms.shim.activemq;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.QueueBrowser;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.Set;
import org.pyjms.shim.BrowseCursor;

/**
 * A browse over ActiveMQ Classic whose end a second browser confirms. ActiveMQ 6.3.1 sometimes
 * ends a browse early: a loop of "send 3 messages (synchronous, persistent), browse the queue"
 * saw an empty or short browse about once in 40,000 passes, with pyjms's broker and with a
 * plain one, over vm://, when other work ran beside it. The broker's own trace of such a pass
 * showed the queue handing all three messages to the browser and then ending it. The cause is
 * on the client, in ActiveMQQueueBrowser.hasMoreElements (and nextElement): it looks whether
 * its consumer holds a message, then whether the broker has ended the browse. Where the
 * session's dispatch thread delivers the remaining messages and the end between those two
 * looks, it returns false and closes its consumer with those messages in it.
 *
 * <p>So where the browser's enumeration ends, the pass goes on through a new browser from the
 * head of the queue, skipping by JMSMessageID what the pass has returned, and ends where that
 * one ends. A message the first browser missed comes then, after those returned; one that
 * arrived meanwhile may come too, as a browse may show a message sent while it runs. The
 * price is a second read of the queue at the end of every pass (docs/providers.md); a browser
 * of pyjms's own that looks at the end before it looks for a message would not need it.
 */
final class ConfirmedBrowse implements BrowseCursor {
    private final Opener opener;
    /** The browser read now: the first, then the confirming one (a test reads its prefetch). */
    private QueueBrowser browser;
    private Enumeration<?> messages;
    private boolean confirming;
    /** The JMSMessageIDs this pass returned: the confirming browser skips them. */
    private final Set<String> returned = new HashSet<>();

    ConfirmedBrowse(Opener opener) throws JMSException {
        this.opener = opener;
        this.browser = opener.open();
    }

    @Override
    public Message next() throws JMSException {
        while (true) {
            if (messages == null) messages = browser.getEnumeration();
            // ActiveMQ's nextElement may answer null where hasMoreElements said yes: its end too
            Message m = messages.hasMoreElements() ? (Message) messages.nextElement() : null;
            if (m != null) {
                String id = m.getJMSMessageID();
                if (id == null || returned.add(id)) return m;
                continue; // the confirming browser meets what the first one returned
            }
            if (confirming) return null;
            confirming = true;
            QueueBrowser first = browser;
            browser = opener.open();
            messages = null;
            first.close();
        }
    }

    @Override
    public void close() throws JMSException { browser.close(); }
}
