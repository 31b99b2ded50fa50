package org.pyjms.shim.delay;

/**
 * The staging header: the properties a staged message carries (pyjms.delay.staging defines the
 * same names on the Python side). The delay processor drops them when it delivers.
 */
public final class StagingHeader {
    /** The destination key of the message's target. */
    public static final String TARGET = org.pyjms.shim.Contract.STAGED_TARGET;
    /** The sender's own correlation id, restored at delivery. */
    public static final String CORRELATION_ID = org.pyjms.shim.Contract.STAGED_CORRELATION_ID;
    /** The staged copy's exact expiration; JMS_PYJMS_Expiration of the delivered message. */
    public static final String EXPIRATION = org.pyjms.shim.Contract.STAGED_EXPIRATION;
    /** Who staged a message filed to a slot queue. */
    public static final String USER = org.pyjms.shim.Contract.STAGED_USER;

    private StagingHeader() {}

    /** Whether a property is one of the staging header's. */
    static boolean contains(String name) {
        return name.equals(TARGET) || name.equals(CORRELATION_ID) || name.equals(EXPIRATION) || name.equals(USER);
    }
}
