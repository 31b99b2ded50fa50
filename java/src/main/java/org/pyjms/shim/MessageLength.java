package org.pyjms.shim;

import java.nio.charset.StandardCharsets;

/**
 * A message's length as IBM MQ counts it against a queue's MAXMSGL: the body's bytes plus the
 * application's properties (each name and value), not the provider's encoding of the whole
 * message (its headers, ids and framing). Strings count as UTF-8, numbers by their Java size.
 * The provider's and pyjms's own properties do not count. pyjms.rules.delivery counts the same.
 */
public final class MessageLength {
    private MessageLength() {}

    /** Whether a property counts: not JMS headers nor JMSX*, not pyjms's nor the provider's own. */
    public static boolean counts(String name) {
        if (name.startsWith("JMS")) return name.startsWith("JMS_") && !name.startsWith(Contract.RESERVED_PREFIX);
        return !name.startsWith("_AMQ") && !name.startsWith("__AMQ") && !name.startsWith("AMQ_")
                && !name.startsWith("_HQ");
    }

    /** The bytes a property or map value takes. */
    public static long valueLength(Object v) {
        if (v == null) return 0;
        if (v instanceof byte[] b) return b.length;
        if (v instanceof Boolean || v instanceof Byte) return 1;
        if (v instanceof Short || v instanceof Character) return 2;
        if (v instanceof Integer || v instanceof Float) return 4;
        if (v instanceof Long || v instanceof Double) return 8;
        return utf8(String.valueOf(v));
    }

    public static long utf8(String s) {
        return s == null ? 0 : s.getBytes(StandardCharsets.UTF_8).length;
    }

    /** The properties' share: each counted name and its value. */
    public static long properties(java.util.Map<String, ?> properties) {
        long n = 0;
        for (java.util.Map.Entry<String, ?> e : properties.entrySet()) {
            if (counts(e.getKey())) n += utf8(e.getKey()) + valueLength(e.getValue());
        }
        return n;
    }

    /** A map body's share: each entry's name and value. */
    public static long entries(java.util.Map<String, ?> entries) {
        long n = 0;
        for (java.util.Map.Entry<String, ?> e : entries.entrySet()) n += utf8(e.getKey()) + valueLength(e.getValue());
        return n;
    }
}
