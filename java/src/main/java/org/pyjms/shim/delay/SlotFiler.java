package org.pyjms.shim.delay;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.pyjms.shim.Channel;
import org.pyjms.shim.Codec;
import org.pyjms.shim.Poison;
import org.pyjms.shim.Receiver;

/**
 * The delay processor's sorter step (pyjms.delay.processor_sorter), done in the shim so that
 * staged messages do not cross into Python: each message is sent unchanged, with no TTL, to
 * the slot queue of its delivery time, {@code slotPrefix + (deliveryTime / slotMs) + "." +
 * suffix}, on the channel's transacted session. Plain JMS: it works on any provider.
 */
public final class SlotFiler {
    private final Channel channel;
    private final String slotPrefix, suffix;
    private final long slotMs, horizonMs;
    private final int mostAttempts;

    /**
     * Messages due sooner than horizonMs are not filed: Python puts them to their target. A
     * message delivered more than mostAttempts times is quarantined (Poison.quarantineStaged).
     */
    public SlotFiler(Channel channel, String slotPrefix, String suffix, long slotMs, long horizonMs, int mostAttempts) {
        this.channel = channel;
        this.slotPrefix = slotPrefix;
        this.suffix = suffix;
        this.slotMs = slotMs;
        this.horizonMs = horizonMs;
        this.mostAttempts = mostAttempts;
    }

    /**
     * Files up to max messages of a receiver (waiting up to timeoutMs for the first, then taking
     * what is already there). Returns int n, then n pairs (long slot, int count); then int m and
     * m records of the messages due within the horizon, which Python handles itself; then int q,
     * the poison messages (org.pyjms.shim.Poison) it put on the channel's dead-letter queue.
     */
    public byte[] file(Receiver from, int max, long timeoutMs) throws JMSException {
        channel.checkOpen();
        MessageConsumer consumer = from.jmsConsumer();
        Map<Long, Integer> filed = new LinkedHashMap<>();
        List<Message> soon = new ArrayList<>();
        Message m = consumer.receive(Math.max(1, timeoutMs));
        int n = 0;
        int quarantined = 0;
        while (m != null) {
            long due = Poison.time(m, Channel.DELIVERY_TIME, 0);
            if (Poison.quarantineStaged(channel, m, mostAttempts)) {
                // anyone who may stage may put this: it goes to the dead-letter queue in this
                // transaction, and every other message goes on
                quarantined++;
            } else if (due - System.currentTimeMillis() < horizonMs) {
                soon.add(m);
            } else {
                long slot = due / slotMs;
                channel.forward(slotPrefix + slot + "." + suffix, m, StagingHeader.USER, stagedBy(m));
                filed.merge(slot, 1, Integer::sum);
            }
            if (++n >= max) break;
            m = channel.provider().receiveBuffered(channel.connection(), consumer); // what has arrived
        }
        Codec.Out out = new Codec.Out(1024);
        out.putInt(filed.size());
        for (Map.Entry<Long, Integer> e : filed.entrySet()) {
            out.putLong(e.getKey());
            out.putInt(e.getValue());
        }
        out.putInt(soon.size());
        for (Message s : soon) Codec.encode(s, out);
        out.putInt(quarantined);
        return out.toByteArray();
    }

    /**
     * Who staged m: the user the broker stamped (JMSXUserID) on a message of the staging queue
     * (any value it carries in StagingHeader.USER is the sender's, so not believed), else (a slot
     * queue's, filed again) the user its filer kept. "" for none.
     */
    private String stagedBy(Message m) throws JMSException {
        Object user;
        if (("queue://" + suffix).equals(org.pyjms.shim.Destinations.key(m.getJMSDestination()))) {
            user = m.getObjectProperty("JMSXUserID");
        } else {
            user = m.getObjectProperty(StagingHeader.USER);
        }
        return user == null ? "" : user.toString();
    }
}
