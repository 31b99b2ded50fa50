package org.pyjms.shim;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.QueueBrowser;
import java.util.Enumeration;

/** A QueueBrowser read in packed batches. */
public final class Browser implements AutoCloseable {
    private final QueueBrowser browser;
    private Enumeration<?> cursor;
    /** The ids of the poison messages skipped since skippedIds was last called. */
    private final StringBuilder skipped = new StringBuilder();

    Browser(QueueBrowser browser) { this.browser = browser; }

    /** Up to max further messages (int count, then records); count 0 means the end. */
    public byte[] next(int max) throws JMSException {
        if (cursor == null) cursor = browser.getEnumeration();
        Codec.Out out = new Codec.Out(8192);
        int countAt = out.reserveInt();
        int n = 0;
        while (n < max && cursor.hasMoreElements()) {
            Message m = (Message) cursor.nextElement();
            Codec.PropertyNames names = Codec.PropertyNames.of(m);
            String[] poison = Poison.problem(m, names);
            if (poison != null) { // left where it is for a receiver to quarantine
                Poison.skipped(m, poison);
                if (skipped.length() > 0) skipped.append('\n');
                skipped.append(m.getJMSMessageID());
                continue;
            }
            if (expired(m, names)) continue; // a browse never shows an expired message (E03)
            Codec.encode(m, out, names);
            n++;
        }
        out.patchInt(countAt, n);
        return out.toByteArray();
    }

    /**
     * Whether a browsed message has expired: by pyjms's exact expiration where a delay carried
     * it, else by its JMSExpiration, as a consumer's client drops an expired message it receives.
     * A browser's client may show one: Qpid JMS shows what Artemis holds past its expiry until
     * the broker's reaper takes it, a natively delayed message among them.
     */
    private static boolean expired(Message m, Codec.PropertyNames names) throws JMSException {
        long exact = names.reserved() ? Poison.time(m, Channel.EXPIRATION, 0) : 0;
        long expiration = exact != 0 ? exact : m.getJMSExpiration();
        return expiration != 0 && System.currentTimeMillis() >= expiration;
    }

    /** The JMSMessageIDs of the poison messages (org.pyjms.shim.Poison) skipped since the last
     *  call, one per line, or null: a receiver quarantines them. */
    public String skippedIds() {
        if (skipped.length() == 0) return null;
        String ids = skipped.toString();
        skipped.setLength(0);
        return ids;
    }

    @Override
    public void close() throws JMSException { browser.close(); }
}
