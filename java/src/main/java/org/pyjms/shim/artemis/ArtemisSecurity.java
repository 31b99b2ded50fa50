package org.pyjms.shim.artemis;

import java.security.Principal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import javax.security.auth.Subject;
import org.apache.activemq.artemis.api.core.Message;
import org.apache.activemq.artemis.core.message.impl.CoreMessage;
import org.apache.activemq.artemis.core.security.CheckType;
import org.apache.activemq.artemis.core.security.Role;
import org.apache.activemq.artemis.core.server.ServerSession;
import org.apache.activemq.artemis.core.server.plugin.ActiveMQServerMessagePlugin;
import org.apache.activemq.artemis.core.transaction.Transaction;
import org.apache.activemq.artemis.spi.core.protocol.RemotingConnection;
import org.apache.activemq.artemis.spi.core.security.ActiveMQSecurityManager5;
import org.apache.activemq.artemis.spi.core.security.jaas.RolePrincipal;
import org.apache.activemq.artemis.spi.core.security.jaas.UserPrincipal;
import org.apache.activemq.artemis.utils.SecurityManagerUtil;

/**
 * Users and access rules for an embedded Artemis broker, kept in memory: password sign-in and
 * group (role) based rules, with no JAAS. Artemis's ActiveMQBasicSecurityManager keeps its users
 * in the journal, which a non-persistent broker does not have, so this one holds them itself and
 * decides with Artemis's own SecurityManagerUtil, as that manager does.
 *
 * <p>Rules come in pyjms's form (as for the ActiveMQ broker): kind, pattern with ActiveMQ
 * wildcards ({@code >} any words, {@code *} one word), read, write and admin groups. Artemis
 * applies only the most specific matching security setting, where ActiveMQ applies every matching
 * rule; so each match gets the roles of every rule whose pattern covers it.
 */
final class ArtemisSecurity implements ActiveMQSecurityManager5 {
    /** Artemis names a temporary queue (its address too) with a random UUID. */
    private static final Pattern TEMPORARY = Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");

    private final Map<String, String> passwords = new HashMap<>();
    private final Map<String, Set<String>> groups = new HashMap<>();

    ArtemisSecurity(String[][] users) {
        for (String[] u : users) {
            passwords.put(u[0], u[1]);
            Set<String> mine = new LinkedHashSet<>();
            for (String g : u[2].split(",")) if (!g.isBlank()) mine.add(g.trim());
            groups.put(u[0], mine);
        }
    }

    /** Artemis security settings (match -> roles) for pyjms's rule rows. */
    static Map<String, Set<Role>> settings(String[][] rules) {
        List<String[]> rows = new ArrayList<>(List.of(rules == null ? new String[0][] : rules));
        Map<String, Set<Role>> out = new LinkedHashMap<>();
        for (String[] r : rows) {
            String match = artemisPattern(r[1]);
            if (out.containsKey(match)) continue;
            Map<String, boolean[]> rights = new LinkedHashMap<>(); // group -> send, consume, subscribe, admin
            for (String[] other : rows) {
                if (!covers(artemisPattern(other[1]), match)) continue;
                boolean topic = "topic".equals(other[0]);
                for (String g : split(other[2])) {
                    boolean[] a = rights.computeIfAbsent(g, k -> new boolean[4]);
                    a[1] = true;
                    if (topic) a[2] = true; // a topic subscriber makes its own subscription queue
                }
                for (String g : split(other[3])) rights.computeIfAbsent(g, k -> new boolean[4])[0] = true;
                for (String g : split(other[4])) rights.computeIfAbsent(g, k -> new boolean[4])[3] = true;
            }
            Set<Role> roles = new HashSet<>();
            rights.forEach((g, a) -> roles.add(new Role(g, a[0], a[1], a[3], a[3], a[2] || a[3], a[2] || a[3],
                    false, a[1], a[3], a[3], false, false)));
            out.put(match, roles);
        }
        return out;
    }

    private static List<String> split(String groups) {
        List<String> out = new ArrayList<>();
        for (String g : groups.split(",")) if (!g.isBlank()) out.add(g.trim());
        return out;
    }

    /** ActiveMQ's wildcards in Artemis's: {@code >} (any words) is {@code #}. */
    static String artemisPattern(String activemq) {
        return activemq.replace(">", "#");
    }

    /** Whether every address that {@code specific} matches is matched by {@code general} too. */
    static boolean covers(String general, String specific) {
        if (general.equals(specific)) return true;
        StringBuilder regex = new StringBuilder();
        String[] words = general.split("\\.", -1);
        for (int i = 0; i < words.length; i++) {
            String w = words[i];
            if (w.equals("#")) regex.append(i == 0 ? "(.*)" : "(\\..*)?");
            else {
                if (i > 0) regex.append("\\.");
                regex.append(w.equals("*") ? "[^.]*" : Pattern.quote(w));
            }
        }
        return Pattern.matches(regex.toString(), specific);
    }

    @Override
    public Subject authenticate(String user, String password, RemotingConnection connection, String domain) {
        String expected = user == null ? null : passwords.get(user);
        if (expected == null || !expected.equals(password)) return null;
        return subjectOf(user);
    }

    /** The user's subject as a sign-in makes it, or null for a user the broker does not know. */
    Subject subjectOf(String user) {
        if (user == null || !groups.containsKey(user)) return null;
        Subject subject = new Subject();
        Set<Principal> principals = subject.getPrincipals();
        principals.add(new UserPrincipal(user));
        for (String g : groups.get(user)) principals.add(new RolePrincipal(g));
        return subject;
    }

    @Override
    public boolean authorize(Subject subject, Set<Role> roles, CheckType checkType, String address) {
        if (subject == null) return false;
        // temporary destinations are open to every signed-in user, as on the ActiveMQ broker
        String bare = address == null ? null : address.split("::", 2)[0]; // address::queue when a queue is named
        if (bare != null && TEMPORARY.matcher(bare).matches() && checkType != CheckType.MANAGE) return true;
        return SecurityManagerUtil.authorize(subject, roles, checkType, RolePrincipal.class);
    }

    /**
     * Stamps who sent each message that populate-validated-user cannot: Artemis stamps only its
     * core messages, and an AMQP message's validated user is always null. So an AMQP message gets
     * the signed-in user as the core property the stamp is (_AMQ_VALIDATED_USER, whatever the
     * client put there), which a core reader, pyjms's services among them, reads as JMSXUserID.
     */
    static final class StampEveryProtocol implements ActiveMQServerMessagePlugin {
        @Override
        public void beforeSend(ServerSession session, Transaction tx, Message message, boolean direct,
                               boolean noAutoCreateQueue) {
            if (message instanceof CoreMessage) return; // stamped by the broker itself
            String user = session.getValidatedUser();
            if (user == null) message.removeProperty(Message.HDR_VALIDATED_USER);
            else message.putStringProperty(Message.HDR_VALIDATED_USER, user);
            message.reencode(); // an AMQP reader gets the message as encoded: with the stamp
        }
    }

    @Override
    public boolean validateUser(String user, String password) {
        return authenticate(user, password, null, null) != null;
    }

    @Override
    public boolean validateUserAndRole(String user, String password, Set<Role> roles, CheckType checkType) {
        return authorize(authenticate(user, password, null, null), roles, checkType, null);
    }
}
