package org.pyjms.shim;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.QueueBrowser;
import java.util.Enumeration;

/** One pass of a browse over a queue: its messages in order, then its end (Provider.browse). */
public interface BrowseCursor extends AutoCloseable {
    /** The next message of the pass, or null at its end. */
    Message next() throws JMSException;

    @Override
    void close() throws JMSException;

    /** Opens a browser of the same queue, with the same selector, each time it is called. */
    @FunctionalInterface
    interface Opener {
        QueueBrowser open() throws JMSException;
    }

    /** The browser's own enumeration: the pass most providers make. */
    static BrowseCursor of(QueueBrowser browser) { return new Enumerated(browser); }

    /** A QueueBrowser's enumeration, begun at the first read. */
    final class Enumerated implements BrowseCursor {
        private final QueueBrowser browser;
        private Enumeration<?> messages;

        Enumerated(QueueBrowser browser) { this.browser = browser; }

        @Override
        public Message next() throws JMSException {
            if (messages == null) messages = browser.getEnumeration();
            return messages.hasMoreElements() ? (Message) messages.nextElement() : null;
        }

        @Override
        public void close() throws JMSException { browser.close(); }
    }
}
