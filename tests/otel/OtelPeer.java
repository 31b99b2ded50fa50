// A plain Jakarta JMS client traced with the OpenTelemetry Java API and SDK, for pyjms's
// OpenTelemetry tests. It knows nothing of pyjms: it propagates trace context in message
// properties exactly as the OpenTelemetry Java agent's JMS instrumentation does (W3C trace
// context; each propagation field is a String property of the same name, '-' written as
// "__dash__"). Run it with Java's single-file source launcher:
//
//   java -cp <activemq jars>:<opentelemetry jars> OtelPeer.java <mode> <url> <queue>
//
//   receive  receives one message and makes a CONSUMER span "process <queue>" whose parent is
//            the context the message carries
//   send     makes a PRODUCER span "send <queue>" (a new trace), writes its context into a
//            text message's properties and sends it
//
// Either prints one JSON line: the span as the SDK recorded it (name, kind, trace id, span id,
// parent span id, whether the parent came from another process) and the message's id. Ids are
// lowercase hex, 32 digits for a trace and 16 for a span, as OpenTelemetry writes them.

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.context.propagation.TextMapSetter;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.activemq.ActiveMQConnectionFactory;

public class OtelPeer {
    /** What the Java agent writes for each '-' of a propagation field's name. */
    static final String DASH = "__dash__";
    private static final long RECEIVE_TIMEOUT_MS = 30_000;
    private static final TextMapPropagator PROPAGATOR = W3CTraceContextPropagator.getInstance();

    /** Writes a field as a String property, as the agent's setter does. */
    static final TextMapSetter<Message> SETTER = (message, key, value) -> {
        try {
            message.setStringProperty(key.replace("-", DASH), value);
        } catch (JMSException e) {
            throw new IllegalStateException(e);
        }
    };

    /** Reads a field back; only String values count, as with the agent's getter. */
    static final TextMapGetter<Message> GETTER = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Message message) {
            try {
                List<String> names = new ArrayList<>();
                for (Object name : Collections.list(message.getPropertyNames())) names.add((String) name);
                return names;
            } catch (JMSException e) {
                return List.of();
            }
        }

        @Override
        public String get(Message message, String key) {
            if (message == null) return null;
            try {
                Object value = message.getObjectProperty(key.replace("-", DASH));
                return value instanceof String s ? s : null;
            } catch (JMSException e) {
                return null;
            }
        }
    };

    /** Keeps the spans the SDK finished, to print them. */
    static final class Recorded implements SpanExporter {
        final List<SpanData> spans = new CopyOnWriteArrayList<>();

        @Override
        public CompletableResultCode export(Collection<SpanData> batch) {
            spans.addAll(batch);
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public CompletableResultCode flush() {
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public CompletableResultCode shutdown() {
            return CompletableResultCode.ofSuccess();
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: OtelPeer.java receive|send <url> <queue>");
            System.exit(2);
        }
        String mode = args[0], url = args[1], queueName = args[2];
        Recorded recorded = new Recorded();
        SdkTracerProvider tracerProvider =
                SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(recorded)).build();
        Tracer tracer = tracerProvider.get("pyjms-otel-peer");
        String messageId;
        Connection connection = new ActiveMQConnectionFactory(url).createConnection();
        try {
            connection.start();
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue queue = session.createQueue(queueName);
            switch (mode) {
                case "receive" -> messageId = receive(session, queue, tracer);
                case "send" -> messageId = send(session, queue, tracer);
                default -> throw new IllegalArgumentException("unknown mode " + mode);
            }
        } finally {
            connection.close();
            tracerProvider.close();
        }
        SpanData span = recorded.spans.get(0);
        System.out.println("{\"name\":\"" + span.getName() + "\",\"kind\":\"" + span.getKind()
                + "\",\"traceId\":\"" + span.getTraceId() + "\",\"spanId\":\"" + span.getSpanId()
                + "\",\"parentSpanId\":\"" + (span.getParentSpanContext().isValid() ? span.getParentSpanId() : "")
                + "\",\"parentRemote\":" + span.getParentSpanContext().isRemote()
                + ",\"spans\":" + recorded.spans.size()
                + ",\"messageId\":\"" + messageId + "\"}");
    }

    static String receive(Session session, Queue queue, Tracer tracer) throws JMSException {
        MessageConsumer consumer = session.createConsumer(queue);
        Message message = consumer.receive(RECEIVE_TIMEOUT_MS);
        if (message == null) throw new IllegalStateException("no message within " + RECEIVE_TIMEOUT_MS + " ms");
        Context creation = PROPAGATOR.extract(Context.root(), message, GETTER);
        tracer.spanBuilder("process " + queue.getQueueName())
                .setParent(creation)
                .setSpanKind(SpanKind.CONSUMER)
                .startSpan()
                .end();
        return message.getJMSMessageID();
    }

    static String send(Session session, Queue queue, Tracer tracer) throws JMSException {
        TextMessage message = session.createTextMessage("from a traced Java producer");
        Span span = tracer.spanBuilder("send " + queue.getQueueName()).setSpanKind(SpanKind.PRODUCER).startSpan();
        try (Scope ignored = span.makeCurrent()) {
            PROPAGATOR.inject(Context.current(), message, SETTER);
            session.createProducer(queue).send(message);
        } finally {
            span.end();
        }
        return message.getJMSMessageID();
    }
}
