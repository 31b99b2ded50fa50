package org.pyjms.shim;

/**
 * The Python/Java contract, on the Java side: everything both sides of the JVM boundary must
 * agree on, named once here (record kinds, flags and value tags, send flags, the
 * {@code JMS_PYJMS_*} properties, pyjms's queues). Its Python twin is pyjms.bridge.contract,
 * field for field with the same names; tests/unit/test_contract.py checks that they agree.
 * Every other Java class takes these values from here.
 */
public final class Contract {
    private Contract() {}

    // records (Codec)
    public static final byte KIND_MESSAGE = 0, KIND_TEXT = 1, KIND_BYTES = 2, KIND_MAP = 3,
            KIND_OBJECT = 4, KIND_STREAM = 5;
    public static final byte FLAG_HEADERS = 1, FLAG_PROPERTIES = 2;
    public static final byte T_NULL = 0, T_BOOL = 1, T_BYTE = 2, T_SHORT = 3, T_INT = 4, T_LONG = 5,
            T_FLOAT = 6, T_DOUBLE = 7, T_STRING = 8, T_BYTES = 9, T_CHAR = 10;

    // send flags (Channel): which headers to skip, and how a nonzero delay is applied
    public static final int SEND_NO_MESSAGE_ID = 1, SEND_NO_TIMESTAMP = 2, SEND_DELAY_NATIVE = 4,
            SEND_DELAY_SCHEDULER = 8;

    // session modes beyond JMS's (Channel.open)
    /** CLIENT_ACKNOWLEDGE on the provider's individual acknowledge mode (Provider.individualAcknowledgeMode). */
    public static final int INDIVIDUAL_ACKNOWLEDGE = 101;

    // message properties
    /** The prefix of every property pyjms writes (users cannot set them). */
    public static final String RESERVED_PREFIX = "JMS_PYJMS_";
    public static final String DELIVERY_TIME = "JMS_PYJMS_DeliveryTime";
    public static final String SEND_TIME = "JMS_PYJMS_Timestamp";
    public static final String EXPIRATION = "JMS_PYJMS_Expiration";
    public static final String STAGED_TARGET = "JMS_PYJMS_DDL_Target";
    public static final String STAGED_CORRELATION_ID = "JMS_PYJMS_DDL_CorrelationID";
    public static final String STAGED_EXPIRATION = "JMS_PYJMS_DDL_Expiration";
    /** On a slot queue's message: the user the broker stamped when it was staged ("" for none). */
    public static final String STAGED_USER = "JMS_PYJMS_DDL_User";
    public static final String SUBSCRIBER = "JMS_PYJMS_Subscriber";
    public static final String MESSAGE_ID = "JMS_PYJMS_MessageID";
    public static final String DEAD_LETTER_HEADER_PREFIX = "JMS_PYJMS_DLH_";
    public static final String DLQ_DETAIL = "JMS_PYJMS_DLQDetail";
    /** The dead-letter reason of a message quarantined for a malformed pyjms property (MQRC_FORMAT_ERROR). */
    public static final int QUARANTINE_REASON = 2110;

    // queues
    public static final String STAGING_QUEUE = "SYSTEM.DDELAY.LOCAL.QUEUE";
    public static final String DEAD_LETTER_QUEUE = "SYSTEM.DEAD.LETTER.QUEUE";
    public static final String SLOT_PREFIX = "PYJMS.SLOT.";
    /** Where a pyjms broker's admin service listens; a consumer on it marks a pyjms broker. */
    public static final String ADMIN_QUEUE = "PYJMS.ADMIN";
    /** Leader election of pyjms's services: a pyjms broker makes every consumer of these exclusive. */
    public static final String LEADER_PREFIX = "PYJMS.LEADER.";

    // a broker's refusal with IBM MQ's reason. OpenWire and Artemis's core protocol carry only an
    // exception's text to the client, so the reason rides in the text in one format, written and
    // read here only: the client-side shim hands Python the reason as an int (reasonOf)
    private static final java.util.regex.Pattern REASON_IN_TEXT =
            java.util.regex.Pattern.compile(" ?\\[MQRC_[A-Z_]+\\((\\d+)\\)\\]");

    /** The text of a refusal: "why [MQRC_NAME(reason)]". */
    public static String refusal(int reason, String name, String why) {
        return why + " [" + name + "(" + reason + ")]";
    }

    /** The IBM MQ reason a refusal anywhere in this exception's causes carries, or 0. */
    public static int reasonOf(Throwable t) {
        for (int depth = 0; t != null && depth < 8; t = t.getCause(), depth++) {
            java.util.regex.Matcher m = REASON_IN_TEXT.matcher(String.valueOf(t.getMessage()));
            if (m.find()) return Integer.parseInt(m.group(1));
        }
        return 0;
    }

    /** A refusal's text without the reason's tag (the reason travels apart, as a number). */
    public static String withoutReason(String text) {
        return text == null ? null : REASON_IN_TEXT.matcher(text).replaceAll("");
    }
}
