package org.pyjms.shim.artemis;

import jakarta.jms.ConnectionFactory;
import jakarta.jms.Destination;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import java.util.Map;
import org.apache.activemq.artemis.core.version.impl.VersionImpl;
import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;
import org.apache.activemq.artemis.jms.client.ActiveMQDestination;
import org.apache.activemq.artemis.utils.VersionLoader;
import org.pyjms.shim.Provider;
import org.pyjms.shim.Providers;

/**
 * Apache Artemis through its own Jakarta client, which has every JMS 2.0 feature pyjms needs
 * natively: delivery delay, async send, shared subscriptions. So nothing here is emulated;
 * only temporary destinations need help crossing the boundary by name.
 */
public final class ArtemisProvider implements Provider {
    private static final String CONFIRMATION_WINDOW = "confirmationWindowSize";

    @Override
    public String name() {
        return "Apache Artemis " + VersionLoader.getVersion().getFullVersion();
    }

    /** url: an Artemis client URL (tcp://host:port, vm://N, (tcp://a,tcp://b)?ha=true...). */
    @Override
    public ConnectionFactory factory(String url, Map<String, String> properties) throws Exception {
        ActiveMQConnectionFactory f = new ActiveMQConnectionFactory(url);
        // pyjms never deserializes an ObjectMessage body; the client may not either
        f.setDeserializationDenyList("*");
        // an async send completes when the broker confirms it, so a refused put reaches the
        // CompletionListener; without a window the client completes it once written (-1)
        if (!url.contains(CONFIRMATION_WINDOW) && !properties.containsKey(CONFIRMATION_WINDOW)) {
            f.setConfirmationWindowSize(1024 * 1024);
        }
        for (Map.Entry<String, String> e : properties.entrySet()) Providers.setProperty(f, e.getKey(), e.getValue());
        return f;
    }

    @Override
    public Destination temporary(String key) {
        if (key.startsWith("temp-queue://")) return ActiveMQDestination.createTemporaryQueue(key.substring(13));
        if (key.startsWith("temp-topic://")) return ActiveMQDestination.createTemporaryTopic(key.substring(13));
        return null;
    }

    /** Artemis's client has async sends (confirmed by the broker, see factory) and listener
     *  redelivery of its own. */
    @Override
    public boolean jms2Client() { return true; }

    /** Artemis's MessageConsumer has no receiveBody (its JMSConsumer's receives, then reads the
     *  body): the same here, on the session's consumer. */
    @Override
    public Object receiveBody(MessageConsumer c, Class<?> type, long timeoutMs) throws JMSException {
        Message m = timeoutMs == 0 ? c.receiveNoWait() : timeoutMs < 0 ? c.receive() : c.receive(timeoutMs);
        return m == null ? null : m.getBody(type);
    }

    /** setDeliveryDelay stamps JMSDeliveryTime, and the core protocol carries it
     *  (_AMQ_SCHED_DELIVERY). */
    @Override
    public boolean carriesDeliveryTime() { return true; }
}
