package org.pyjms.shim.amqp;

import jakarta.jms.Connection;
import java.lang.reflect.Field;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import org.apache.qpid.jms.JmsConnection;
import org.apache.qpid.jms.provider.Provider;
import org.apache.qpid.jms.provider.ProviderWrapper;
import org.apache.qpid.jms.provider.amqp.AmqpConnection;
import org.apache.qpid.jms.provider.amqp.AmqpProvider;
import org.apache.qpid.proton.amqp.Symbol;

/**
 * What the AMQP peer behind a Qpid JMS connection said about itself when the connection
 * opened: its product and version (the open frame's properties, where it sends them), the
 * name a pyjms Artemis broker adds there, and whether it offers the DELAYED_DELIVERY and
 * SHARED-SUBS capabilities.
 *
 * <p>Qpid JMS keeps these inside its provider and has no public accessor for them, so they
 * are read by reflection, finding the fields by type, not by name. If a Qpid release moves
 * them, the peer is "unknown": capabilities read as absent, so pyjms falls back to staging
 * and refuses shared subscriptions with a clear error rather than guessing.
 */
public record AmqpPeer(String product, String version, String container, String pyjmsBroker,
                       boolean delayedDelivery, boolean sharedSubscriptions, boolean known) {
    static final Symbol PRODUCT = Symbol.valueOf("product"), VERSION = Symbol.valueOf("version"),
            DELAYED_DELIVERY = Symbol.valueOf("DELAYED_DELIVERY"), SHARED_SUBS = Symbol.valueOf("SHARED-SUBS");

    /**
     * The open frame's property in which a pyjms Artemis broker sends its name
     * (artemis.AmqpOpenProperty, not linked: this package needs no Artemis jars).
     */
    static final Symbol PYJMS_BROKER = Symbol.valueOf("pyjms-broker");

    /** activemq.EmbeddedBroker.NAME_PREFIX and artemis.EmbeddedArtemis.NAME_PREFIX, not linked:
     *  this package needs no ActiveMQ or Artemis jars. */
    static final String PYJMS_BROKER_PREFIX = "pyjms";

    static final AmqpPeer UNKNOWN = new AmqpPeer(null, null, null, null, false, false, false);

    /** ActiveMQ Classic names itself "ActiveMQ" (Artemis says "apache-activemq-artemis"). */
    public boolean isActiveMQClassic() { return "ActiveMQ".equals(product); }

    /** Apache Artemis, which drops messages whose _AMQ_DUPL_ID application property it has seen. */
    public boolean isArtemis() { return "apache-activemq-artemis".equals(product); }

    /**
     * A broker pyjms started (pyjms.broker.embedded): ActiveMQ Classic sends its broker name as
     * the container id, and pyjms brokers' names start with "pyjms"; Artemis sends its node id
     * (a UUID) there, so a pyjms Artemis broker adds its name as an open frame property.
     */
    public boolean isPyjmsBroker() {
        if (isArtemis()) return pyjmsBroker != null && pyjmsBroker.startsWith(PYJMS_BROKER_PREFIX);
        return isActiveMQClassic() && container != null && container.startsWith(PYJMS_BROKER_PREFIX);
    }

    /** "ActiveMQ 6.3.1", the container id when the peer sends no product, else "unknown". */
    public String describe() {
        if (product != null) return version == null ? product : product + " " + version;
        return container != null ? "container '" + container + "'" : "unknown";
    }

    private static final Map<Connection, AmqpPeer> KNOWN = java.util.Collections.synchronizedMap(new WeakHashMap<>());

    /**
     * The peer of an open Qpid JMS connection, read once per connection (its AMQP connection opens
     * with the first session; before that the peer is not known, and not remembered).
     */
    public static AmqpPeer of(Connection c) {
        AmqpPeer peer = KNOWN.get(c);
        if (peer == null) {
            peer = read(c);
            if (peer.known) KNOWN.put(c, peer);
        }
        return peer;
    }

    private static AmqpPeer read(Connection c) {
        try {
            AmqpConnection amqp = amqpConnection(c);
            if (amqp == null) return UNKNOWN;
            org.apache.qpid.proton.engine.Connection proton = amqp.getEndpoint();
            Map<Symbol, Object> properties = proton.getRemoteProperties();
            Symbol[] offered = proton.getRemoteOfferedCapabilities();
            List<Symbol> capabilities = offered == null ? List.of() : Arrays.asList(offered);
            return new AmqpPeer(text(properties, PRODUCT), text(properties, VERSION), proton.getRemoteContainer(),
                    text(properties, PYJMS_BROKER),
                    capabilities.contains(DELAYED_DELIVERY) || amqp.getProperties().isDelayedDeliverySupported(),
                    capabilities.contains(SHARED_SUBS) || amqp.getProperties().isSharedSubsSupported(), true);
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return UNKNOWN;
        }
    }

    private static String text(Map<Symbol, Object> properties, Symbol key) {
        Object v = properties == null ? null : properties.get(key);
        return v == null ? null : v.toString();
    }

    private static AmqpConnection amqpConnection(Connection c) throws ReflectiveOperationException {
        if (!(c instanceof JmsConnection)) return null;
        Object provider = fieldOfType(JmsConnection.class, c, Provider.class);
        while (provider instanceof ProviderWrapper<?> w) provider = w.getNext();
        if (!(provider instanceof AmqpProvider)) return null;
        return (AmqpConnection) fieldOfType(AmqpProvider.class, provider, AmqpConnection.class);
    }

    private static Object fieldOfType(Class<?> owner, Object target, Class<?> type) throws ReflectiveOperationException {
        for (Field f : owner.getDeclaredFields()) {
            if (type.isAssignableFrom(f.getType())) {
                f.setAccessible(true);
                return f.get(target);
            }
        }
        return null;
    }
}
