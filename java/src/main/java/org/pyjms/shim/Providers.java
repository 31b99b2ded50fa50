package org.pyjms.shim;

import jakarta.jms.ConnectionFactory;
import java.lang.reflect.Method;
import java.util.Map;

/** Chooses the provider for a URL or a connection factory class name. */
public final class Providers {
    private static final String ACTIVEMQ = "org.pyjms.shim.activemq.ActiveMQProvider";
    private static final String AMQP = "org.pyjms.shim.amqp.AmqpProvider";
    /** pyjms's provider names (pyjms.bridge.urls) and their classes, loaded by name so that this
     *  class links against no provider's client. */
    private static final Map<String, String> BY_NAME = Map.of(
            "activemq", ACTIVEMQ,
            "artemis", "org.pyjms.shim.artemis.ArtemisProvider",
            "amqp", AMQP);
    /** The factory classes of those providers' clients: named by a user, they get the provider's
     *  own handling (its safe defaults, and what it knows of pyjms's brokers). */
    private static final Map<String, String> BY_FACTORY_CLASS = Map.of(
            "org.apache.activemq.ActiveMQConnectionFactory", "activemq",
            "org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory", "artemis",
            "org.apache.qpid.jms.JmsConnectionFactory", "amqp");

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

    /** The provider pyjms calls {@code name} ("activemq", "artemis", "amqp"). */
    public static Provider forName(String name) throws Exception {
        String className = BY_NAME.get(name);
        if (className == null) {
            throw new IllegalArgumentException("no provider named '" + name + "': use one of "
                    + String.join(", ", new java.util.TreeSet<>(BY_NAME.keySet())) + ", or name a factory class");
        }
        try {
            Provider p = (Provider) Class.forName(className).getDeclaredConstructor().newInstance();
            p.name(); // links the provider's client classes: a missing jar fails here, not at first use
            return p;
        } catch (ClassNotFoundException | NoClassDefFoundError missing) {
            throw new IllegalStateException("the " + name + " provider's client is not on this JVM's classpath ("
                    + missing.getMessage() + "): run 'pyjms providers fetch " + name
                    + "' before the first pyjms call of the process starts the JVM");
        }
    }

    /** Any Jakarta JMS provider: instantiate its factory class and apply bean properties. */
    public static Provider forFactoryClass(String className) throws Exception {
        String known = BY_FACTORY_CLASS.get(className);
        if (known != null) return forName(known); // its factory() takes a null URL and bean properties
        return new Provider() {
            @Override public String name() { return className; }

            @Override public ConnectionFactory factory(String url, Map<String, String> props) throws Exception {
                Object f;
                try {
                    f = Class.forName(className).getDeclaredConstructor().newInstance();
                } catch (ClassNotFoundException | NoClassDefFoundError missing) {
                    String fetch = className.startsWith("com.ibm.") ? "ibmmq" : "NAME";
                    throw new IllegalStateException("the factory class " + className + " is not on the classpath: "
                            + "add its client's jars with ConnectionFactory(classpath=[...]) (the CLI's --classpath), "
                            + "or for a provider pyjms knows run 'pyjms providers fetch " + fetch
                            + "' (activemq, artemis, amqp, ibmmq)");
                }
                if (url != null && !url.isEmpty()) setProperty(f, "brokerURL", url);
                for (Map.Entry<String, String> e : props.entrySet()) setProperty(f, e.getKey(), e.getValue());
                return (ConnectionFactory) f;
            }
        };
    }

    /**
     * Whether neither the URL ({@code urlOption}, as the client's URL spells it) nor the
     * properties ({@code property}) choose an option: then a provider may give its factory
     * pyjms's own default for it.
     */
    public static boolean unset(String url, Map<String, String> properties, String urlOption, String property) {
        return (url == null || !url.contains(urlOption)) && !properties.containsKey(property);
    }

    /** Sets a bean property of a provider's factory from its string value. */
    public static void setProperty(Object bean, String name, String value) throws Exception {
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
