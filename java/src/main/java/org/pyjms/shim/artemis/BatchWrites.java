package org.pyjms.shim.artemis;

import org.apache.activemq.artemis.core.protocol.core.Channel;
import org.apache.activemq.artemis.core.protocol.core.Packet;
import org.apache.activemq.artemis.spi.core.protocol.RemotingConnection;
import org.apache.activemq.artemis.spi.core.remoting.Connection;

/**
 * Writes the non-blocking sends of one of the shim's batch calls to the socket together.
 *
 * <p>Without {@code batchDelay}, Artemis's client writes every non-blocking send with its own
 * flush (NettyConnection.write: writeAndFlush), a write to the socket per message. Whether a
 * connection then pays for that write depends on whether its socket happens to back up, when
 * Netty writes many at once: connections ran at one of two speeds, 60-70% apart, by chance (4
 * against 9 µs a message to send; docs/asyncio-measurements.md, session 40). {@code batchDelay}
 * writes them together, but holds back every write of the connection for up to that delay, a
 * lone send's too.
 *
 * <p>So inside a batch call ({@link #start}) the shim writes its non-blocking sends without a
 * flush, flushing every {@link #FLUSH_EVERY}th, and the call's end flushes the rest: the event
 * loop runs what one thread submits in order, so that flush follows all the call's writes.
 * Every other write (a lone send, an acknowledgement, a blocking call, a request for producer
 * credits) is written and flushed as the client does.
 */
final class BatchWrites {
    /**
     * Sends a flush covers: some 60 KB of 100-byte messages (about 960 bytes each on the wire),
     * so that the socket and the broker start on a batch while the caller still encodes the rest.
     */
    static final int FLUSH_EVERY = 64;

    /** This thread's batch call: how deep, and what it wrote and has not flushed. */
    private static final class Batch {
        int depth;
        int unflushed;
        RemotingConnection connection;
    }

    private static final ThreadLocal<Batch> BATCH = ThreadLocal.withInitial(Batch::new);

    private BatchWrites() {}

    /** Starts a batch call on this thread; the Runnable ends it, flushing what it wrote. */
    static Runnable start() {
        Batch batch = BATCH.get();
        batch.depth++;
        return () -> {
            if (--batch.depth > 0) return;
            RemotingConnection connection = batch.connection;
            batch.connection = null;
            if (batch.unflushed > 0) {
                batch.unflushed = 0;
                flush(connection);
            }
        };
    }

    /** Writes a non-blocking send: with the rest of its batch in a batch call, else at once. */
    static void send(Channel channel, Packet packet) {
        Batch batch = BATCH.get();
        if (batch.depth == 0) {
            channel.sendBatched(packet); // the client's own write (and flush, without batchDelay)
            return;
        }
        RemotingConnection connection = channel.getConnection();
        if (batch.connection != null && batch.connection != connection) {
            flush(batch.connection); // another connection (a failover's): the first one's writes go now
            batch.unflushed = 0;
        }
        boolean flush = ++batch.unflushed >= FLUSH_EVERY;
        batch.connection = flush ? null : connection;
        if (flush) batch.unflushed = 0;
        channel.send(packet, flush);
    }

    private static void flush(RemotingConnection connection) {
        Connection transport = connection.getTransportConnection();
        if (transport == null) return;
        try {
            transport.flush();
        } catch (IllegalStateException closed) {
            // closed or failed meanwhile: its writes are lost with it, as any write on it, and the
            // failure reaches the application by its next call or the exception listener
        }
    }
}
