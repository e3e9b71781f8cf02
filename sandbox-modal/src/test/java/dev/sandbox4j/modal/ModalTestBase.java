package dev.sandbox4j.modal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.Descriptors;
import com.google.protobuf.Message;
import dev.sandbox4j.spi.Backoff;
import dev.sandbox4j.modal.internal.ModalDriver;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** An in-process fake Modal, a runner wired to it, a sleeper that records instead of sleeping, and a leak check. */
abstract class ModalTestBase {
    static final String TOKEN_ID = "ak-TESTTOKENID1234567890";
    static final String TOKEN_SECRET = "as-TESTTOKENSECRET0987654321";
    static final ObjectMapper JSON = new ObjectMapper();
    final List<Duration> sleeps = Collections.synchronizedList(new ArrayList<>());
    FakeModal fake;
    ModalSandboxRunner runner;

    @BeforeEach
    void startFake() throws IOException {
        fake = new FakeModal();
        runner = builder().build();
    }

    @AfterEach
    void stopFake() {
        if (runner != null) {
            runner.close();
        }
        fake.close();
        assertEquals(0, fake.leaks(), "sandboxes left running: " + fake.sandboxes.keySet());
    }

    Backoff backoff() {
        return Backoff.builder().base(Duration.ofMillis(100)).max(Duration.ofSeconds(1)).jitter(0)
                .sleeper(d -> sleeps.add(d)).build();
    }

    ModalSandboxRunner.Builder builder() {
        return ModalSandboxRunner.builder()
                .serverUrl("http://127.0.0.1:1")
                .tokenId(TOKEN_ID)
                .tokenSecret(TOKEN_SECRET)
                .backoff(backoff())
                .lostCreateWindow(Duration.ofMillis(1)) // one lookup round
                .execGrace(Duration.ofMillis(500))
                .channels(fake::channel);
    }

    ModalDriver driver(ModalSandboxRunner r) {
        return (ModalDriver) r.lifecycle().driver();
    }

    static JsonNode recording(String name) throws IOException {
        try (InputStream in = ModalTestBase.class.getResourceAsStream("/recordings/" + name)) {
            return JSON.readTree(in);
        }
    }

    /** A request as the recordings print it: protobuf field names, enum names, only the fields on the wire. */
    static ObjectNode json(Message m) {
        ObjectNode o = JsonNodeFactory.instance.objectNode();
        for (Map.Entry<Descriptors.FieldDescriptor, Object> e : m.getAllFields().entrySet()) {
            Descriptors.FieldDescriptor fd = e.getKey();
            if (fd.isMapField()) {
                ObjectNode map = o.putObject(fd.getName());
                for (Object entry : (List<?>) e.getValue()) {
                    Message me = (Message) entry;
                    Descriptors.Descriptor d = me.getDescriptorForType();
                    map.put(String.valueOf(me.getField(d.findFieldByName("key"))), String.valueOf(me.getField(d.findFieldByName("value"))));
                }
            } else if (fd.isRepeated()) {
                ArrayNode a = o.putArray(fd.getName());
                for (Object v : (List<?>) e.getValue()) {
                    a.add(value(fd, v));
                }
            } else {
                o.set(fd.getName(), value(fd, e.getValue()));
            }
        }
        return o;
    }

    private static JsonNode value(Descriptors.FieldDescriptor fd, Object v) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        switch (fd.getJavaType()) {
            case MESSAGE:
                return json((Message) v);
            case ENUM:
                return f.textNode(((Descriptors.EnumValueDescriptor) v).getName());
            case STRING:
                return f.textNode((String) v);
            case BOOLEAN:
                return f.booleanNode((Boolean) v);
            case BYTE_STRING:
                return f.textNode(((com.google.protobuf.ByteString) v).toStringUtf8());
            default:
                return f.numberNode(new BigDecimal(v.toString()));
        }
    }

    /** Numbers compared by value (the recordings print 55 where protobuf has 55.0f). */
    static JsonNode canon(JsonNode n) {
        if (n.isNumber()) {
            return JsonNodeFactory.instance.textNode(n.decimalValue().stripTrailingZeros().toPlainString());
        }
        if (n.isObject()) {
            ObjectNode o = JsonNodeFactory.instance.objectNode();
            n.fields().forEachRemaining(e -> o.set(e.getKey(), canon(e.getValue())));
            return o;
        }
        if (n.isArray()) {
            ArrayNode a = JsonNodeFactory.instance.arrayNode();
            n.forEach(x -> a.add(canon(x)));
            return a;
        }
        return n;
    }
}
