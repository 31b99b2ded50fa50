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
import org.apache.activemq.artemis.core.protocol.core.impl.wireformat.CreateSessionResponseMessage;
import org.apache.activemq.artemis.core.protocol.core.impl.wireformat.SessionSendMessage_V3;
import org.apache.activemq.artemis.spi.core.protocol.RemotingConnection;
import org.apache.activemq.artemis.spi.core.remoting.ClientProtocolManager;
import org.apache.activemq.artemis.spi.core.remoting.SessionContext;

/**
 * Artemis's core protocol, with the broker asked to answer only the sends someone waits for.
 *
 * <p>pyjms gives the client a send-confirmation window so that an async send's CompletionListener
 * hears the broker's answer (a refused put included). With a window, though, Artemis's client
 * asks the broker to answer EVERY send, also a plain non-persistent send whose caller never
 * waits and whose answer nobody reads: on a 2-core machine that cost about a third of the
 * batched throughput against the client on its defaults. Here a send asks for an answer when
 * it blocks (a persistent send) or carries a handler (an async send, whose listener the answer
 * completes), as it does without a window. The window's confirmations, which the broker sends
 * once per window of bytes, still clear the client's resend cache.
 */
final class AnsweredSends extends ActiveMQClientProtocolManagerFactory {

    @Override
    public ClientProtocolManager newProtocolManager() {
        return new ActiveMQClientProtocolManager() {
            @Override
            protected SessionContext newSessionContext(String name, int confirmationWindowSize, Channel sessionChannel,
                                                       CreateSessionResponseMessage response) {
                return new Context(name, connection, sessionChannel, response.getServerVersion(), confirmationWindowSize);
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
                channel.sendBatched(packet);
            }
        }
    }
}
