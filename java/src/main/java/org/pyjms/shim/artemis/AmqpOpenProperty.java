package org.pyjms.shim.artemis;

import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.Map;
import org.apache.activemq.artemis.core.server.plugin.ActiveMQServerConnectionPlugin;
import org.apache.activemq.artemis.protocol.amqp.broker.ActiveMQProtonRemotingConnection;
import org.apache.activemq.artemis.protocol.amqp.proton.AMQPConnectionContext;
import org.apache.activemq.artemis.protocol.amqp.proton.handler.EventHandler;
import org.apache.activemq.artemis.spi.core.protocol.RemotingConnection;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.engine.Connection;
import org.apache.qpid.proton.engine.EndpointState;
import org.apache.qpid.proton.engine.impl.ConnectionImpl;

/**
 * A pyjms Artemis broker names itself in the open frame it answers an AMQP client with: the
 * property {@code pyjms-broker} is its name, beside Artemis's product and version. The client
 * reads that frame anyway (AmqpPeer), so it knows a pyjms broker with no request and no wait,
 * as it knows a pyjms ActiveMQ broker by its container id. Artemis's container id is its node
 * id, a UUID, and a stock Artemis sends no such property.
 *
 * <p>Artemis has no setting for the open frame's properties: its AMQPConnectionContext sets them
 * as it answers the client's open (onRemoteOpen), and the frame is written when that dispatch of
 * events ends. This plugin adds an event handler to each AMQP connection an acceptor makes,
 * before any frame is read; a connection's handlers are called in the order they were added, so
 * this one's onRemoteOpen runs after Artemis's and adds the property to those Artemis set.
 * Proton-J's Connection has no public getter for them (ConnectionImpl's is package-private),
 * so it is reached by reflection; were it gone, the frame is left as Artemis made it, and AMQP
 * clients take the broker for a stock one, as before.
 */
final class AmqpOpenProperty implements ActiveMQServerConnectionPlugin {
    /** The property's key, as amqp.AmqpPeer reads it (not linked: this package needs no Qpid JMS jars). */
    static final Symbol PYJMS_BROKER = Symbol.valueOf("pyjms-broker");

    /** ConnectionImpl.getProperties(): the properties an open frame is to carry, or null. */
    private static final Method PROPERTIES = propertiesGetter();

    private final String brokerName;

    AmqpOpenProperty(String brokerName) { this.brokerName = brokerName; }

    private static Method propertiesGetter() {
        try {
            Method m = ConnectionImpl.class.getDeclaredMethod("getProperties");
            m.setAccessible(true);
            return m;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    @Override
    public void afterCreateConnection(RemotingConnection connection) {
        if (PROPERTIES == null || !(connection instanceof ActiveMQProtonRemotingConnection amqp)) return;
        AMQPConnectionContext context = amqp.getAmqpConnection();
        if (!context.isIncomingConnection()) return;
        context.addEventHandler(new EventHandler() {
            @Override
            public void onRemoteOpen(Connection c) throws ReflectiveOperationException {
                // not opened: refused (a failed sign-in...), and Artemis closes it
                if (c.getLocalState() != EndpointState.ACTIVE || !(c instanceof ConnectionImpl)) return;
                @SuppressWarnings("unchecked")
                Map<Symbol, Object> set = (Map<Symbol, Object>) PROPERTIES.invoke(c);
                Map<Symbol, Object> properties = set == null ? new HashMap<>() : new HashMap<>(set);
                properties.put(PYJMS_BROKER, brokerName);
                c.setProperties(properties);
            }

            // Artemis's audit log takes the remote address from each handler in turn
            @Override
            public String getRemoteAddress() { return context.getRemoteAddress(); }
        });
    }
}
