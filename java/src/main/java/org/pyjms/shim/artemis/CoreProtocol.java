package org.pyjms.shim.artemis;

import org.apache.activemq.artemis.api.core.ActiveMQException;
import org.apache.activemq.artemis.api.core.ICoreMessage;
import org.apache.activemq.artemis.api.core.SimpleString;
import org.apache.activemq.artemis.api.core.client.SendAcknowledgementHandler;
import org.apache.activemq.artemis.core.protocol.core.Channel;
import org.apache.activemq.artemis.core.protocol.core.impl.ActiveMQClientProtocolManager;
import org.apache.activemq.artemis.core.protocol.core.impl.ActiveMQClientProtocolManagerFactory;
import org.apache.activemq.artemis.core.protocol.core.impl.ActiveMQSessionContext;
import org.apache.activemq.artemis.core.protocol.core.impl.PacketImpl;
import org.apache.activemq.artemis.core.protocol.core.impl.wireformat.CheckFailoverMessage;
import org.apache.activemq.artemis.core.protocol.core.impl.wireformat.CheckFailoverReplyMessage;
import org.apache.activemq.artemis.core.protocol.core.impl.wireformat.CreateSessionResponseMessage;
import org.apache.activemq.artemis.core.protocol.core.impl.wireformat.SessionSendMessage_V3;
import org.apache.activemq.artemis.spi.core.protocol.RemotingConnection;
import org.apache.activemq.artemis.spi.core.remoting.ClientProtocolManager;
import org.apache.activemq.artemis.spi.core.remoting.SessionContext;

/**
 * Artemis's core protocol as pyjms's client speaks it: the client's own, with three changes.
 *
 * <p><b>The broker answers only the sends someone waits for.</b> pyjms gives the client a
 * send-confirmation window so that an async send's CompletionListener hears the broker's answer
 * (a refused put included). With a window, though, Artemis's client asks the broker to answer
 * EVERY send, also a plain non-persistent send whose caller never waits and whose answer nobody
 * reads: on a 2-core machine that cost about a third of the batched throughput against the
 * client on its defaults. Here a send asks for an answer when it blocks (a persistent send) or
 * carries a handler (an async send, whose listener the answer completes), as it does without a
 * window. The window's confirmations, which the broker sends once per window of bytes, still
 * clear the client's resend cache.
 *
 * <p><b>A batch call's non-blocking sends are flushed together</b> ({@link BatchWrites}): a flush
 * every 64 sends and one at the call's end, where the client flushes each.
 *
 * <p><b>A failover's check of the broker it reached waits {@link #FAILOVER_CHECK_MS} at most.</b>
 * A client with {@code ha=true} whose broker failed reconnects, and first asks the broker it
 * reached whether it may fail over there (CHECK_FOR_FAILOVER), waiting for the answer as long as
 * for any call (callTimeout, 30 s by default). If that new connection closes before the answer,
 * the client hears of the close only on the executor that is running the failover itself, after
 * it: the check waits out the whole callTimeout, and every session of the connection with it.
 * Thread dumps of tests/faults/test_failover_pair.py's cooperative dispatchers on an Artemis pair
 * showed it in 3 of 46 runs: the failover thread in checkForFailover for 30 s, a dispatcher's
 * commit waiting on the failover, and no socket of the client's for that connection (most
 * likely one the SIGKILLed broker's kernel completed into its listening socket's backlog just
 * before that socket closed, after the client's first connections had). The broker answers the
 * check at once, from memory (ActiveMQPacketHandler.handleCheckForFailover), so here it is given
 * up after FAILOVER_CHECK_MS; the client then drops that connection and tries again after its
 * retryInterval, as after a refused one.
 */
final class CoreProtocol extends ActiveMQClientProtocolManagerFactory {
    /**
     * How long a failover waits for the broker it reached to answer whether it may fail over
     * there. The answer is one round trip on a connection the broker has just accepted, with no
     * work behind it (milliseconds); 2 s leaves room for a busy broker or a GC pause, and is short
     * beside what waits on the failover (a cooperative dispatcher holds a mark for
     * MsgMarkBrowseInterval: 5 s on a pyjms broker). Too short, it costs one more reconnect
     * after retryInterval; a shorter callTimeout still bounds it.
     */
    static final long FAILOVER_CHECK_MS = 2_000;

    @Override
    public ClientProtocolManager newProtocolManager() {
        return new ActiveMQClientProtocolManager() {
            @Override
            protected SessionContext newSessionContext(String name, int confirmationWindowSize, Channel sessionChannel,
                                                       CreateSessionResponseMessage response) {
                return new Context(name, connection, sessionChannel, response.getServerVersion(), confirmationWindowSize);
            }

            @Override
            public boolean checkForFailover(String nodeID) throws ActiveMQException {
                Channel channel1 = getChannel1();
                long timeout = Math.min(FAILOVER_CHECK_MS, channel1.getConnection().getBlockingCallTimeout());
                CheckFailoverReplyMessage reply = (CheckFailoverReplyMessage) channel1.sendBlocking(
                        new CheckFailoverMessage(nodeID), -1, PacketImpl.CHECK_FOR_FAILOVER_REPLY, timeout, true);
                return reply.isOkToFailover();
            }
        };
    }

    private static final class Context extends ActiveMQSessionContext {
        Context(String name, RemotingConnection connection, Channel channel, int serverVersion, int confirmationWindow) {
            super(name, connection, channel, serverVersion, confirmationWindow);
        }

        @Override
        public void sendFullMessage(ICoreMessage message, boolean sendBlocking, SendAcknowledgementHandler handler,
                                    SimpleString defaultAddress, int senderID) throws ActiveMQException {
            Channel channel = getSessionChannel();
            // without a window, or to a broker older than the current send packet: the client's own way
            if (getConfirmationWindow() == -1 || channel.getConnection().isBeforeProducerMetricsChanged()) {
                super.sendFullMessage(message, sendBlocking, handler, defaultAddress, senderID);
                return;
            }
            boolean answerWanted = sendBlocking || handler != null;
            SessionSendMessage_V3 packet = new SessionSendMessage_V3(message, answerWanted, handler, senderID);
            if (sendBlocking) {
                channel.sendBlocking(packet, PacketImpl.NULL_RESPONSE);
            } else {
                BatchWrites.send(channel, packet);
            }
        }
    }
}
