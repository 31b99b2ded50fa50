package org.pyjms.shim.activemq;

import java.security.Principal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.activemq.broker.Broker;
import org.apache.activemq.broker.BrokerFilter;
import org.apache.activemq.broker.BrokerPlugin;
import org.apache.activemq.broker.ConnectionContext;
import org.apache.activemq.broker.ProducerBrokerExchange;
import org.apache.activemq.command.ActiveMQDestination;
import org.apache.activemq.command.ConnectionInfo;
import org.apache.activemq.command.Message;
import org.apache.activemq.util.ByteSequence;
import org.apache.activemq.filter.DestinationMapEntry;
import org.apache.activemq.security.AuthorizationEntry;
import org.apache.activemq.security.AuthorizationPlugin;
import org.apache.activemq.security.DefaultAuthorizationMap;
import org.apache.activemq.security.SecurityContext;
import org.apache.activemq.security.TempDestinationAuthorizationEntry;

/** Users and access rules for an embedded broker: password sign-in, group-based access rules. */
final class Security {
    private static final String GROUP_CLASS = GroupPrincipal.class.getName();
    private static final String USER_ID = "JMSXUserID";

    final BrokerPlugin authentication;
    final AuthorizationPlugin authorization;
    final DefaultAuthorizationMap map;
    private final Map<String, Set<Principal>> memberships;

    private Security(BrokerPlugin authentication, DefaultAuthorizationMap map, Map<String, Set<Principal>> memberships) {
        this.authentication = authentication;
        this.map = map;
        this.authorization = new AuthorizationPlugin(map);
        this.memberships = memberships;
    }

    /** Whether the write rules of the destination (every rule that matches it) name a group of the user's. */
    boolean mayWrite(String user, ActiveMQDestination destination) {
        return anyOf(user, map.getWriteACLs(destination));
    }

    boolean mayWriteTemporary(String user) {
        return anyOf(user, map.getTempDestinationWriteACLs());
    }

    private boolean anyOf(String user, Set<?> groups) {
        Set<Principal> mine = user == null ? null : memberships.get(user);
        if (mine == null || groups == null) return false;
        for (Object g : groups) if (mine.contains(g)) return true;
        return false;
    }

    static Security of(String[][] users, String[][] rules) throws Exception {
        Map<String, String> passwords = new HashMap<>();
        Map<String, Set<Principal>> memberships = new HashMap<>();
        Set<String> groups = new LinkedHashSet<>();
        for (String[] u : users) {
            passwords.put(u[0], u[1]);
            Set<Principal> mine = new LinkedHashSet<>();
            for (String g : u[2].split(",")) {
                if (!g.isBlank()) {
                    mine.add(new GroupPrincipal(g.trim()));
                    groups.add(g.trim());
                }
            }
            memberships.put(u[0], mine);
        }
        String everyone = String.join(",", groups);

        List<DestinationMapEntry> entries = new ArrayList<>();
        for (String[] r : rules == null ? new String[0][] : rules) {
            entries.add(entry("topic".equals(r[0]), r[1], r[2], r[3], r[4]));
        }
        entries.add(entry(true, "ActiveMQ.Advisory.>", everyone, everyone, everyone)); // the client needs them
        DefaultAuthorizationMap map = new DefaultAuthorizationMap(entries);
        map.setGroupClass(GROUP_CLASS);
        TempDestinationAuthorizationEntry temp = new TempDestinationAuthorizationEntry();
        temp.setGroupClass(GROUP_CLASS);
        temp.setRead(everyone);
        temp.setWrite(everyone);
        temp.setAdmin(everyone);
        map.setTempDestinationAuthorizationEntry(temp);
        return new Security(signIn(passwords, memberships), map, memberships);
    }

    private static AuthorizationEntry entry(boolean topic, String pattern, String read, String write, String admin)
            throws Exception {
        AuthorizationEntry e = new AuthorizationEntry();
        e.setGroupClass(GROUP_CLASS); // before the ACL setters, which parse groups with it
        if (topic) e.setTopic(pattern); else e.setQueue(pattern);
        if (!read.isEmpty()) e.setRead(read);
        if (!write.isEmpty()) e.setWrite(write);
        if (!admin.isEmpty()) e.setAdmin(admin);
        return e;
    }

    /**
     * A message's sender is the user the broker stamps (populateJMSXUserID fills its user-id
     * field). An OpenWire client can also put a property named JMSXUserID in the message's
     * property map, which a reader of the map (pyjms's exact-string decoding, or another
     * client) would take for it: the broker removes that property, so only the stamp remains.
     */
    static BrokerPlugin stampedSenderOnly() {
        byte[] name = USER_ID.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        return next -> new BrokerFilter(next) {
            @Override
            public void send(ProducerBrokerExchange exchange, Message message) throws Exception {
                ByteSequence marshalled = message.getMarshalledProperties();
                // the marshalled map holds names as plain bytes: only a message that may carry
                // the name is unmarshalled, not every message
                if (marshalled != null ? contains(marshalled, name) : message.getProperty(USER_ID) != null) {
                    message.removeProperty(USER_ID);
                }
                super.send(exchange, message);
            }
        };
    }

    private static boolean contains(ByteSequence bytes, byte[] what) {
        byte[] data = bytes.getData();
        int end = bytes.getOffset() + bytes.getLength() - what.length;
        outer:
        for (int i = bytes.getOffset(); i <= end; i++) {
            for (int j = 0; j < what.length; j++) if (data[i + j] != what[j]) continue outer;
            return true;
        }
        return false;
    }

    private static BrokerPlugin signIn(Map<String, String> passwords, Map<String, Set<Principal>> memberships) {
        return next -> new BrokerFilter(next) {
            @Override
            public void addConnection(ConnectionContext context, ConnectionInfo info) throws Exception {
                SecurityContext sc = context.getSecurityContext();
                if (sc == null) {
                    String user = info.getUserName();
                    String expected = user == null ? null : passwords.get(user);
                    if (expected == null || !expected.equals(info.getPassword())) {
                        throw new SecurityException("User name [" + user + "] or password is invalid.");
                    }
                    Set<Principal> principals = memberships.get(user);
                    context.setSecurityContext(new SecurityContext(user) {
                        @Override public Set<Principal> getPrincipals() { return principals; }
                    });
                }
                try {
                    super.addConnection(context, info);
                } catch (Exception e) {
                    context.setSecurityContext(null);
                    throw e;
                }
            }
        };
    }
}
