package org.pyjms.shim;

import jakarta.jms.ConnectionFactory;
import java.lang.reflect.Method;
import java.util.Map;

/** Chooses the provider for a URL or a connection factory class name. */
public final class Providers {
    private static final String ACTIVEMQ = "org.pyjms.shim.activemq.ActiveMQProvider";
    private static final String AMQP = "org.pyjms.shim.amqp.AmqpProvider";

    private Providers() {}

    /** The provider that understands this URL: ActiveMQ's schemes, else a generic one. */
    public static Provider forUrl(String url) throws Exception {
        String scheme = url.contains(":") ? url.substring(0, url.indexOf(':')) : url;
        switch (scheme) {
            case "vm", "tcp", "nio", "ssl", "failover", "discovery", "static", "auto", "peer":
                // loaded by name so this class never links against ActiveMQ
                return (Provider) Class.forName(ACTIVEMQ).getDeclaredConstructor().newInstance();
            case "amqp", "amqps", "amqpws", "amqpwss":
                return load(AMQP, "amqp");
            default:
                throw new IllegalArgumentException("no provider for URL '" + url
                        + "': use an ActiveMQ URL (vm://, tcp://, failover:(...)), an AMQP 1.0 URL (amqp://, amqps://) "
                        + "or name a factory class");
        }
    }

    /** A provider package's Provider, loaded by name so this class never links against its client. */
    private static Provider load(String className, String jars) throws Exception {
        try {
            return (Provider) Class.forName(className).getDeclaredConstructor().newInstance();
        } catch (LinkageError missingClient) {
            throw new IllegalStateException("the " + jars + " provider's jars are not on the classpath ("
                    + missingClient.getMessage() + "): run 'pyjms providers fetch " + jars + "'");
        }
    }

    /** Any Jakarta JMS provider: instantiate its factory class and apply bean properties. */
    public static Provider forFactoryClass(String className) {
        return new Provider() {
            @Override public String name() { return className; }

            @Override public ConnectionFactory factory(String url, Map<String, String> props) throws Exception {
                Object f = Class.forName(className).getDeclaredConstructor().newInstance();
                if (url != null && !url.isEmpty()) setProperty(f, "brokerURL", url);
                for (Map.Entry<String, String> e : props.entrySet()) setProperty(f, e.getKey(), e.getValue());
                return (ConnectionFactory) f;
            }
        };
    }

    static void setProperty(Object bean, String name, String value) throws Exception {
        String setter = "set" + Character.toUpperCase(name.charAt(0)) + name.substring(1);
        for (Method m : bean.getClass().getMethods()) {
            if (!m.getName().equals(setter) || m.getParameterCount() != 1) continue;
            Class<?> t = m.getParameterTypes()[0];
            Object v;
            if (t == String.class) v = value;
            else if (t == int.class || t == Integer.class) v = Integer.parseInt(value);
            else if (t == long.class || t == Long.class) v = Long.parseLong(value);
            else if (t == boolean.class || t == Boolean.class) v = Boolean.parseBoolean(value);
            else continue;
            m.invoke(bean, v);
            return;
        }
        throw new IllegalArgumentException("factory " + bean.getClass().getName() + " has no property '" + name + "'");
    }
}
