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
import org.apache.activemq.command.ConnectionInfo;
import org.apache.activemq.filter.DestinationMapEntry;
import org.apache.activemq.security.AuthorizationEntry;
import org.apache.activemq.security.AuthorizationPlugin;
import org.apache.activemq.security.DefaultAuthorizationMap;
import org.apache.activemq.security.SecurityContext;
import org.apache.activemq.security.TempDestinationAuthorizationEntry;

/** Users and access rules for an embedded broker: password sign-in, group-based access rules. */
final class Security {
    private static final String GROUP_CLASS = GroupPrincipal.class.getName();

    final BrokerPlugin authentication;
    final AuthorizationPlugin authorization;
    final DefaultAuthorizationMap map;

    private Security(BrokerPlugin authentication, DefaultAuthorizationMap map) {
        this.authentication = authentication;
        this.map = map;
        this.authorization = new AuthorizationPlugin(map);
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
        return new Security(signIn(passwords, memberships), map);
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
