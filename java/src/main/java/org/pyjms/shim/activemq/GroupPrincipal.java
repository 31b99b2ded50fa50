package org.pyjms.shim.activemq;

import java.security.Principal;

/** A group a user belongs to (ActiveMQ's own class lives in a module activemq-all lacks). */
public final class GroupPrincipal implements Principal {
    private final String name;

    public GroupPrincipal(String name) { this.name = name; }

    @Override public String getName() { return name; }

    @Override public boolean equals(Object o) { return o instanceof GroupPrincipal g && g.name.equals(name); }

    @Override public int hashCode() { return name.hashCode(); }

    @Override public String toString() { return name; }
}
