package org.pyjms.shim;

import jakarta.jms.JMSException;
import jakarta.jms.Message;

/** A browse (Provider.browse) read in packed batches. */
public final class Browser implements AutoCloseable {
    private final BrowseCursor cursor;
    /** The ids of the poison messages skipped since skippedIds was last called. */
    private final StringBuilder skipped = new StringBuilder();

    Browser(BrowseCursor cursor) { this.cursor = cursor; }

    /** Up to max further messages (int count, then records); count 0 means the end. */
    public byte[] next(int max) throws JMSException {
        Codec.Out out = new Codec.Out(8192);
        int countAt = out.reserveInt();
        int n = 0;
        Message m;
        while (n < max && (m = cursor.next()) != null) {
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
    public void close() throws JMSException { cursor.close(); }
}
