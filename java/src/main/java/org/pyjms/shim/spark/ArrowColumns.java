package org.pyjms.shim.spark;

import jakarta.jms.JMSException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;
import org.pyjms.shim.Browser;
import org.pyjms.shim.Contract;
import org.pyjms.shim.Receiver;

/**
 * The Spark reader's batches as Arrow columns, built in the JVM (pyjms.spark.arrow_columns).
 *
 * A batch is taken as the shim's packed records (Receiver.receiveBatch, Browser.next: the
 * same poison, expiry and acknowledgement rules as any receive) and transposed here into the
 * buffers of Arrow arrays of the read schema, so that Python wraps them without a step per
 * row. Values are rendered as pyjms.spark.schema.ArrowRows renders them from the same records.
 * A batch holding a value this class does not render exactly as Python would (a float or
 * double property, a char property that is a lone surrogate, a duplicate id that is neither a
 * string, bytes nor an integer) is handed back as its records instead, for ArrowRows.
 *
 * Answer layout, little-endian: int32 status (-1: the records follow, as the shim packed them;
 * otherwise how many records the batch held), int32 rows kept, 8 pad bytes, then BUFFERS
 * buffers, each an int32 length and 4 pad bytes, its bytes, and padding to a multiple of 8.
 */
public final class ArrowColumns {
    private ArrowColumns() {}

    /** How many buffers a columnar answer holds (pyjms.spark.arrow_columns reads them in order). */
    public static final int BUFFERS = 41;

    private static final byte T_NULL = Contract.T_NULL, T_BOOL = Contract.T_BOOL, T_BYTE = Contract.T_BYTE,
            T_SHORT = Contract.T_SHORT, T_INT = Contract.T_INT, T_LONG = Contract.T_LONG,
            T_FLOAT = Contract.T_FLOAT, T_DOUBLE = Contract.T_DOUBLE, T_STRING = Contract.T_STRING,
            T_BYTES = Contract.T_BYTES, T_CHAR = Contract.T_CHAR;
    private static final byte[] TRUE = "true".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] FALSE = "false".getBytes(StandardCharsets.US_ASCII);
    private static final byte[][] TRANSPORT = {
        Contract.SEND_TIME.getBytes(StandardCharsets.UTF_8),
        Contract.DELIVERY_TIME.getBytes(StandardCharsets.UTF_8),
        Contract.EXPIRATION.getBytes(StandardCharsets.UTF_8),
    };
    private static final byte[] CARRIED_MESSAGE_ID = Contract.MESSAGE_ID.getBytes(StandardCharsets.UTF_8);

    /**
     * Up to max messages from a consumer (waiting up to timeoutMs for the first), as columns.
     * duplicateIdProperty names the property whose value fills the duplicate-id column.
     */
    public static byte[] receive(Receiver from, int max, long timeoutMs, String duplicateIdProperty)
            throws JMSException {
        byte[] first = from.receiveBatch(max, timeoutMs);
        int count = countOf(first);
        if (count == 0 || count >= max) return columns(first, duplicateIdProperty, 0, 1);
        // what the prefetch held when the first came; a consumer that keeps up with the broker
        // would make many small batches, each costing a crossing and an Arrow batch: wait a
        // little for more (never longer than the caller's timeout)
        java.util.List<byte[]> parts = new java.util.ArrayList<>();
        parts.add(first);
        long deadline = System.currentTimeMillis() + Math.min(LINGER_MS, Math.max(timeoutMs, 1));
        for (long left; count < max && (left = deadline - System.currentTimeMillis()) > 0; ) {
            byte[] more = from.receiveBatch(max - count, left);
            int got = countOf(more);
            if (got == 0) break;
            parts.add(more);
            count += got;
        }
        return columns(parts.size() == 1 ? first : joined(parts, count), duplicateIdProperty, 0, 1);
    }

    /** How long a receive waits for more after its first messages, to fill its batch. */
    static final long LINGER_MS = 20;

    private static int countOf(byte[] records) { return ByteBuffer.wrap(records).getInt(); }

    /** Packed record batches as one (count, then every batch's records). */
    private static byte[] joined(java.util.List<byte[]> parts, int count) {
        int size = 4;
        for (byte[] p : parts) size += p.length - 4;
        ByteBuffer out = ByteBuffer.allocate(size).putInt(count);
        for (byte[] p : parts) out.put(p, 4, p.length - 4);
        return out.array();
    }

    /**
     * Up to max further messages of a browse, as columns, keeping only those whose owner is
     * partition (of partitions): the CRC-32 of the duplicate id, or else of the message id
     * pyjms shows (JMS_PYJMS_MessageID, or the provider's), modulo partitions, as
     * pyjms.spark.batch_read's owner. Status 0 means the end of the queue.
     */
    public static byte[] browse(Browser from, int max, String duplicateIdProperty, int partition, int partitions)
            throws JMSException {
        return columns(from.next(max), duplicateIdProperty, partition, partitions);
    }

    /** The records of a batch (count:i32 then records, big-endian) as columns. */
    static byte[] columns(byte[] records, String duplicateIdProperty, int partition, int partitions) {
        ByteBuffer in = ByteBuffer.wrap(records); // big-endian, as the shim writes records
        int count = in.getInt();
        byte[] dupName = duplicateIdProperty.getBytes(StandardCharsets.UTF_8);
        Batch b = new Batch(count);
        long now = System.currentTimeMillis();
        CRC32 crc = partitions > 1 ? new CRC32() : null;
        for (int r = 0; r < count; r++) {
            int start = in.position();
            int length = in.getInt();
            if (!b.add(records, start, dupName, now, crc, partition, partitions)) {
                return fallback(records);
            }
            in.position(start + length);
        }
        return b.finish(count, b.rows);
    }

    private static byte[] fallback(byte[] records) {
        byte[] out = new byte[4 + records.length];
        ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN).putInt(-1).put(records);
        return out;
    }

    /** A column of variable-width values (Arrow string or binary): validity, offsets, data. */
    private static final class VarColumn {
        final Bits valid;
        int[] offsets;
        byte[] data = new byte[256];
        int len;
        int n;

        VarColumn(int capacity) {
            valid = new Bits(capacity);
            offsets = new int[capacity + 1];
        }

        void add(byte[] src, int at, int size) {
            if (size < 0) {
                valid.add(false);
            } else {
                valid.add(true);
                ensure(size);
                System.arraycopy(src, at, data, len, size);
                len += size;
            }
            next();
        }

        void addNull() {
            valid.add(false);
            next();
        }

        private void next() {
            if (n + 2 > offsets.length) offsets = java.util.Arrays.copyOf(offsets, offsets.length * 2);
            offsets[++n] = len;
        }

        private void ensure(int extra) {
            if (len + extra > data.length) data = java.util.Arrays.copyOf(data, Math.max(data.length * 2, len + extra));
        }
    }

    /** A validity or boolean bitmap, least significant bit first (Arrow's). */
    private static final class Bits {
        byte[] bits;
        int n;

        Bits(int capacity) { bits = new byte[Math.max(8, (capacity + 7) / 8)]; }

        void add(boolean on) {
            if ((n >> 3) >= bits.length) bits = java.util.Arrays.copyOf(bits, bits.length * 2);
            if (on) bits[n >> 3] |= (byte) (1 << (n & 7));
            else bits[n >> 3] &= (byte) ~(1 << (n & 7));
            n++;
        }
    }

    private static final class Batch {
        final VarColumn messageId, destination, correlationId, type, replyTo, keys, values, body, text, duplicateId;
        final int[] priority, deliveryMode, deliveryCount;
        final long[] timestamp, deliveryTime, expiration, remainingExpiry;
        final Bits timestampValid, deliveryTimeValid, expirationValid, redelivered;
        final int[] mapOffsets;
        int entries;
        int rows;

        Batch(int capacity) {
            messageId = new VarColumn(capacity);
            destination = new VarColumn(capacity);
            correlationId = new VarColumn(capacity);
            type = new VarColumn(capacity);
            replyTo = new VarColumn(capacity);
            keys = new VarColumn(capacity * 2);
            values = new VarColumn(capacity * 2);
            body = new VarColumn(capacity);
            text = new VarColumn(capacity);
            duplicateId = new VarColumn(capacity);
            priority = new int[capacity];
            deliveryMode = new int[capacity];
            deliveryCount = new int[capacity];
            timestamp = new long[capacity];
            deliveryTime = new long[capacity];
            expiration = new long[capacity];
            remainingExpiry = new long[capacity];
            timestampValid = new Bits(capacity);
            deliveryTimeValid = new Bits(capacity);
            expirationValid = new Bits(capacity);
            redelivered = new Bits(capacity);
            mapOffsets = new int[capacity + 1];
        }

        /**
         * One record (at start of buf) as a row, unless it is expired or another partition
         * owns it; false when a value must be rendered by Python.
         */
        boolean add(byte[] buf, int start, byte[] dupName, long now, CRC32 crc, int partition, int partitions) {
            ByteBuffer in = ByteBuffer.wrap(buf);
            in.position(start + 4);
            byte kind = in.get();
            in.get(); // flags: a received record has headers and properties
            int bodyAt = start + in.getInt();
            // header block (Codec.encodeHeaders)
            int idAt = in.position();
            int idLen = skipString(in);
            long sent = in.getLong();
            int corrAt = in.position();
            int corrLen = skipString(in);
            int replyAt = in.position();
            int replyLen = skipString(in);
            int destAt = in.position();
            int destLen = skipString(in);
            byte mode = in.get();
            byte redeliveredFlag = in.get();
            int typeAt = in.position();
            int typeLen = skipString(in);
            long expires = in.getLong();
            long due = in.getLong();
            byte prio = in.get();
            int count = in.getInt();
            if (expires > 0 && now >= expires) return true; // never shown, as ArrowRows drops it
            // properties: the shown ones go to the map; the duplicate id and carried id noted
            int propsAt = in.position();
            int dupAt = -1, dupLen = -1, carriedAt = -1, carriedLen = -1;
            int n = in.getInt();
            for (int i = 0; i < n; i++) {
                int nameAt = in.position() + 4;
                int nameLen = skipString(in);
                byte tag = in.get();
                int valueAt = in.position();
                if (equal(buf, nameAt, nameLen, dupName)) {
                    if (tag == T_STRING || tag == T_BYTES) {
                        dupLen = in.getInt();
                        dupAt = in.position();
                        if (tag == T_BYTES && !wellFormed(buf, dupAt, dupLen)) return false;
                        in.position(valueAt);
                    } else if (tag != T_NULL) {
                        return false; // str() of an int, a float, a bool: Python's
                    }
                } else if (equal(buf, nameAt, nameLen, CARRIED_MESSAGE_ID)) {
                    if (tag != T_STRING) return false; // str() of it: Python's
                    carriedLen = in.getInt();
                    carriedAt = in.position();
                    in.position(valueAt);
                }
                if (tag == T_FLOAT || tag == T_DOUBLE) return false; // str(float) is Python's
                if (tag == T_CHAR && Character.isSurrogate(in.getChar(valueAt))) return false;
                skipValue(in, tag);
            }
            if (crc != null) {
                crc.reset();
                if (dupAt >= 0) crc.update(buf, dupAt, dupLen);
                else if (carriedAt >= 0) crc.update(buf, carriedAt, carriedLen);
                else if (idLen > 0) crc.update(buf, idAt + 4, idLen);
                long owner = crc.getValue() % partitions; // of nothing: 0, as Python's
                if (owner != partition) return true;
            }
            // the row
            int row = rows++;
            messageId.add(buf, idAt + 4, idLen);
            destination.add(buf, destAt + 4, destLen);
            correlationId.add(buf, corrAt + 4, corrLen);
            type.add(buf, typeAt + 4, typeLen);
            replyTo.add(buf, replyAt + 4, replyLen);
            priority[row] = prio;
            deliveryMode[row] = mode;
            timestamp[row] = micros(sent, timestampValid);
            deliveryTime[row] = micros(due != 0 ? due : sent, deliveryTimeValid);
            expiration[row] = micros(expires, expirationValid);
            // pyjms.api.expiry.remaining_expiry: tenths left, rounded up, at least 1; -1 never
            remainingExpiry[row] = expires <= 0 ? -1 : Math.max(1, -Math.floorDiv(-(expires - now), 100));
            redelivered.add(redeliveredFlag != 0);
            deliveryCount[row] = count != 0 ? count : 1;
            if (dupAt >= 0) duplicateId.add(buf, dupAt, dupLen);
            else duplicateId.addNull();
            // the properties again, now as map entries
            in.position(propsAt + 4);
            for (int i = 0; i < n; i++) {
                int nameAt = in.position() + 4;
                int nameLen = skipString(in);
                byte tag = in.get();
                if (transport(buf, nameAt, nameLen)) {
                    skipValue(in, tag);
                    continue;
                }
                keys.add(buf, nameAt, nameLen);
                entries++;
                switch (tag) {
                    case T_STRING -> {
                        int len = in.getInt();
                        values.add(buf, in.position(), len);
                        in.position(in.position() + Math.max(len, 0));
                    }
                    case T_BOOL -> {
                        byte[] word = in.get() != 0 ? TRUE : FALSE;
                        values.add(word, 0, word.length);
                    }
                    case T_BYTE -> number(in.get());
                    case T_SHORT -> number(in.getShort());
                    case T_INT -> number(in.getInt());
                    case T_LONG -> number(in.getLong());
                    case T_CHAR -> {
                        byte[] c = String.valueOf(in.getChar()).getBytes(StandardCharsets.UTF_8);
                        values.add(c, 0, c.length);
                    }
                    default -> { // null, or bytes: JMS cannot read a byte[] as a String either
                        values.addNull();
                        skipValue(in, tag);
                    }
                }
            }
            mapOffsets[row + 1] = entries;
            // the body (Codec.encode): a text's UTF-8 and its text, a bytes message's bytes
            in.position(bodyAt);
            if (kind == Contract.KIND_TEXT || kind == Contract.KIND_BYTES) {
                int len = in.getInt();
                body.add(buf, bodyAt + 4, len);
                if (kind == Contract.KIND_TEXT) text.add(buf, bodyAt + 4, len);
                else text.addNull();
            } else {
                body.addNull();
                text.addNull();
            }
            return true;
        }

        private void number(long v) {
            byte[] digits = Long.toString(v).getBytes(StandardCharsets.US_ASCII);
            values.add(digits, 0, digits.length);
        }

        byte[] finish(int count, int rows) {
            Out out = new Out(rows * 256 + 1024);
            out.putInt(count);
            out.putInt(rows);
            out.putInt(0);
            out.putInt(0);
            for (VarColumn c : new VarColumn[] {messageId, destination, correlationId, type, replyTo}) var(out, c);
            out.buffer(ints(priority, rows));
            out.buffer(ints(deliveryMode, rows));
            out.buffer(timestampValid.bits, (rows + 7) / 8);
            out.buffer(longs(timestamp, rows));
            out.buffer(deliveryTimeValid.bits, (rows + 7) / 8);
            out.buffer(longs(deliveryTime, rows));
            out.buffer(expirationValid.bits, (rows + 7) / 8);
            out.buffer(longs(expiration, rows));
            out.buffer(longs(remainingExpiry, rows));
            out.buffer(redelivered.bits, (rows + 7) / 8);
            out.buffer(ints(deliveryCount, rows));
            out.buffer(ints(mapOffsets, rows + 1));
            out.buffer(ints(keys.offsets, keys.n + 1));
            out.buffer(keys.data, keys.len);
            var(out, values);
            var(out, body);
            var(out, text);
            var(out, duplicateId);
            return out.toByteArray();
        }

        private static void var(Out out, VarColumn c) {
            out.buffer(c.valid.bits, (c.n + 7) / 8);
            out.buffer(ints(c.offsets, c.n + 1));
            out.buffer(c.data, c.len);
        }

        private long micros(long ms, Bits valid) {
            valid.add(ms > 0);
            return ms > 0 ? ms * 1000 : 0;
        }
    }

    private static boolean transport(byte[] buf, int at, int len) {
        for (byte[] name : TRANSPORT) if (equal(buf, at, len, name)) return true;
        return false;
    }

    private static boolean equal(byte[] buf, int at, int len, byte[] name) {
        return len == name.length && java.util.Arrays.equals(buf, at, at + len, name, 0, len);
    }

    /** Whether bytes are UTF-8 that Python decodes as Java does (else Python's "replace" decides). */
    private static boolean wellFormed(byte[] buf, int at, int len) {
        try {
            StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(buf, at, len));
            return true;
        } catch (java.nio.charset.CharacterCodingException e) {
            return false;
        }
    }

    /** Skips a string (int32 length, -1 for null, then UTF-8); its length. */
    private static int skipString(ByteBuffer in) {
        int len = in.getInt();
        if (len > 0) in.position(in.position() + len);
        return len;
    }

    private static void skipValue(ByteBuffer in, byte tag) {
        switch (tag) {
            case T_NULL -> { }
            case T_STRING, T_BYTES -> skipString(in);
            case T_BOOL, T_BYTE -> in.position(in.position() + 1);
            case T_SHORT, T_CHAR -> in.position(in.position() + 2);
            case T_INT, T_FLOAT -> in.position(in.position() + 4);
            case T_LONG, T_DOUBLE -> in.position(in.position() + 8);
            default -> throw new IllegalStateException("unknown value tag " + tag);
        }
    }

    private static byte[] ints(int[] v, int n) {
        ByteBuffer b = ByteBuffer.allocate(n * 4).order(ByteOrder.LITTLE_ENDIAN);
        b.asIntBuffer().put(v, 0, n);
        return b.array();
    }

    private static byte[] longs(long[] v, int n) {
        ByteBuffer b = ByteBuffer.allocate(n * 8).order(ByteOrder.LITTLE_ENDIAN);
        b.asLongBuffer().put(v, 0, n);
        return b.array();
    }

    /** A growable little-endian output of 8-byte-aligned buffers. */
    private static final class Out {
        private byte[] buf;
        private int len;

        Out(int capacity) { buf = new byte[capacity]; }

        private void ensure(int extra) {
            if (len + extra > buf.length) buf = java.util.Arrays.copyOf(buf, Math.max(buf.length * 2, len + extra));
        }

        void putInt(int v) {
            ensure(4);
            buf[len++] = (byte) v; buf[len++] = (byte) (v >> 8);
            buf[len++] = (byte) (v >> 16); buf[len++] = (byte) (v >> 24);
        }

        void buffer(byte[] data) { buffer(data, data.length); }

        /** int32 length, 4 pad bytes, the bytes, zeros to a multiple of 8. */
        void buffer(byte[] data, int n) {
            if ((len & 7) != 0) throw new IllegalStateException("unaligned buffer at " + len);
            putInt(n);
            putInt(0);
            int padded = (n + 7) & ~7;
            ensure(padded);
            System.arraycopy(data, 0, buf, len, n);
            java.util.Arrays.fill(buf, len + n, len + padded, (byte) 0);
            len += padded;
        }

        byte[] toByteArray() { return java.util.Arrays.copyOf(buf, len); }
    }
}
