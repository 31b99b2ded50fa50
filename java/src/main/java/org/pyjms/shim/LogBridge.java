package org.pyjms.shim;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;

/**
 * Hands log4j2's events to Python's logging (pyjms.bridge.javalog): an appender that puts each
 * event in a bounded queue, which a Python thread drains. Java never calls Python, and a
 * logging thread (a broker's, a client's) never waits: when the queue is full the event is
 * dropped and counted.
 */
public final class LogBridge extends AbstractAppender {
    /** Strings per record in {@link #poll}: level, logger, message, thrown, thread, time. */
    public static final int FIELDS = 6;

    private final ArrayBlockingQueue<String[]> queue;
    private final AtomicLong dropped = new AtomicLong();

    private LogBridge(int capacity) {
        super("pyjms-python", null, null, true, Property.EMPTY_ARRAY);
        this.queue = new ArrayBlockingQueue<>(capacity);
    }

    @Override
    public void append(LogEvent event) {
        String thrown = "";
        Throwable t = event.getThrown();
        if (t != null) {
            StringWriter w = new StringWriter();
            t.printStackTrace(new PrintWriter(w));
            thrown = w.toString();
        }
        String[] record = {
            Integer.toString(event.getLevel().intLevel()),
            String.valueOf(event.getLoggerName()),
            event.getMessage() == null ? "" : event.getMessage().getFormattedMessage(),
            thrown,
            String.valueOf(event.getThreadName()),
            Long.toString(event.getTimeMillis()),
        };
        if (!queue.offer(record)) dropped.incrementAndGet();
    }

    /**
     * Replaces the appenders of log4j2's root logger (the console) with a new bridge holding
     * at most {@code capacity} events; {@code level} (a log4j2 level name, or null to keep the
     * configured one) becomes the root logger's level.
     */
    public static synchronized LogBridge install(int capacity, String level) {
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        Configuration config = context.getConfiguration();
        LogBridge bridge = new LogBridge(capacity);
        bridge.start();
        config.addAppender(bridge);
        LoggerConfig root = config.getRootLogger();
        for (String name : new ArrayList<>(root.getAppenders().keySet())) root.removeAppender(name);
        root.addAppender(bridge, null, null);
        if (level != null) root.setLevel(Level.toLevel(level, root.getLevel()));
        context.updateLoggers();
        return bridge;
    }

    /**
     * Up to {@code max} events, waiting at most {@code timeoutMs} for the first: {@link #FIELDS}
     * strings each, one after the other (one array per crossing, not one object per event).
     */
    public String[] poll(int max, long timeoutMs) throws InterruptedException {
        String[] first = queue.poll(timeoutMs, TimeUnit.MILLISECONDS);
        if (first == null) return new String[0];
        List<String[]> got = new ArrayList<>();
        got.add(first);
        queue.drainTo(got, Math.max(0, max - 1));
        String[] out = new String[got.size() * FIELDS];
        for (int i = 0; i < got.size(); i++) System.arraycopy(got.get(i), 0, out, i * FIELDS, FIELDS);
        return out;
    }

    /** How many events were dropped for a full queue since the last call. */
    public long takeDropped() {
        return dropped.getAndSet(0);
    }
}
