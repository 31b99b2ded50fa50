package org.pyjms.shim.activemq;

import java.io.IOException;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.activemq.broker.Broker;
import org.apache.activemq.broker.BrokerService;
import org.apache.activemq.broker.region.AbstractRegion;
import org.apache.activemq.broker.region.Destination;
import org.apache.activemq.broker.region.DestinationFilter;
import org.apache.activemq.broker.region.DurableTopicSubscription;
import org.apache.activemq.broker.region.RegionBroker;
import org.apache.activemq.broker.region.Subscription;
import org.apache.activemq.broker.region.Topic;
import org.apache.activemq.broker.region.virtual.VirtualTopic;
import org.apache.activemq.broker.region.virtual.VirtualTopicInterceptor;
import org.apache.activemq.command.ActiveMQDestination;
import org.apache.activemq.command.ActiveMQTopic;
import org.apache.activemq.command.Message;
import org.apache.activemq.util.SubscriptionKey;

/**
 * What a pyjms broker does for delayed publications staged one copy per subscriber (IBM MQ's
 * D16): it lists a topic's subscribers by address, and it forwards a copy addressed to one
 * subscriber to that subscriber only. Which copies to stage is decided in Python
 * (pyjms.broker.subscriptions); this is only what needs the broker's own view.
 *
 * Addresses: "Q:Consumer.S.T" for a shared subscription (a virtual-topic queue), and for a plain
 * or durable topic subscriber the address in its selector's pyjms clause
 * ({@code JMS_PYJMS_Subscriber = 'N:...'}), which makes the broker give it only copies
 * addressed to it (or to nobody). A subscriber without that clause (not made by pyjms) is
 * listed as "?": it cannot be addressed.
 */
public final class DelayedPublications {
    public static final String SUBSCRIBER = org.pyjms.shim.Contract.SUBSCRIBER;
    private static final Pattern CLAUSE = Pattern.compile(SUBSCRIBER + " = '([^']*)'");

    private DelayedPublications() {}

    /** Every topic virtualized (queue Consumer.S.T), addressed copies to their queue only. */
    static VirtualTopic everyTopic() {
        VirtualTopic v = new VirtualTopic() {
            @Override
            public Destination intercept(Destination destination) {
                return new VirtualTopicInterceptor(destination, this) {
                    @Override
                    protected boolean shouldDispatch(Broker broker, Message message, Destination queue) throws IOException {
                        Object to = message.getProperty(SUBSCRIBER);
                        if (to == null) return super.shouldDispatch(broker, message, queue);
                        return to.equals("Q:" + queue.getActiveMQDestination().getPhysicalName());
                    }
                };
            }
        };
        v.setName(">");
        v.setPrefix("Consumer.*.");
        v.setSelectorAware(false);
        return v;
    }

    /** The addresses of the subscribers of a topic now, sorted; "?" for one without an address. */
    public static String[] subscribersOf(BrokerService service, String topic) throws Exception {
        RegionBroker regions = (RegionBroker) service.getRegionBroker();
        TreeSet<String> out = new TreeSet<>();
        Topic t = topicOf(regions, topic);
        if (t != null) {
            for (Subscription s : t.getConsumers()) out.add(addressIn(s.getConsumerInfo().getSelector()));
            for (DurableTopicSubscription s : t.getDurableTopicSubs().values()) {
                out.add(addressIn(s.getConsumerInfo().getSelector()));
            }
        }
        String suffix = "." + topic;
        for (Map.Entry<ActiveMQDestination, Destination> e
                : ((AbstractRegion) regions.getQueueRegion()).getDestinationMap().entrySet()) {
            String q = e.getKey().getPhysicalName();
            if (q.startsWith("Consumer.") && q.endsWith(suffix) && q.length() > 9 + suffix.length()
                    && q.indexOf('.', 9) == q.length() - suffix.length()) {
                out.add("Q:" + q);
            }
        }
        return out.toArray(new String[0]);
    }

    /** The selector of a durable subscription to a topic now ("" for none), or null if there is no such subscription. */
    public static String durableSelector(BrokerService service, String topic, String clientId, String name) throws Exception {
        Topic t = topicOf((RegionBroker) service.getRegionBroker(), topic);
        if (t == null) return null;
        DurableTopicSubscription s = t.getDurableTopicSubs().get(new SubscriptionKey(clientId, name));
        if (s == null) return null;
        String selector = s.getConsumerInfo().getSelector();
        return selector == null ? "" : selector;
    }

    /** The broker's Topic of that name (under the virtual-topic interceptor), or null if none yet. */
    private static Topic topicOf(RegionBroker regions, String topic) {
        Destination d = ((AbstractRegion) regions.getTopicRegion()).getDestinationMap().get(new ActiveMQTopic(topic));
        if (d instanceof Topic) return (Topic) d;
        return d instanceof DestinationFilter ? ((DestinationFilter) d).getAdaptor(Topic.class) : null;
    }

    private static String addressIn(String selector) {
        if (selector == null) return "?";
        Matcher m = CLAUSE.matcher(selector);
        return m.find() ? m.group(1) : "?";
    }
}
