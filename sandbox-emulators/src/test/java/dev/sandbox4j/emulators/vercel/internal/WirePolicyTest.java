package dev.sandbox4j.emulators.vercel.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The policy a session received, and the network its local sandbox gets (host only if the canary's loopback is allowed). */
class WirePolicyTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @ParameterizedTest(name = "{0} -> host network {1}")
    @CsvSource(delimiter = '|', value = {
        "{'mode':'allow-all'}                                                    | true",
        "{'mode':'deny-all'}                                                     | false",
        "{}                                                                      | false",
        "{'allow':[]}                                                            | false",
        "{'allow':['registry.npmjs.org','*.github.com']}                         | false",
        "{'allow':['localhost']}                                                 | true",
        "{'allow':['127.0.0.1']}                                                 | true",
        "{'subnets':{'allow':['127.0.0.1/32']}}                                  | true",
        "{'subnets':{'allow':['127.0.0.0/8']}}                                   | true",
        "{'subnets':{'allow':['0.0.0.0/0']}}                                     | true",
        "{'subnets':{'allow':['::1/128']}}                                       | true",
        "{'subnets':{'allow':['10.0.0.0/8']}}                                    | false",
        "{'subnets':{'allow':['127.0.0.1/32'],'deny':['127.0.0.0/8']}}           | false",
        "{'allow':{'*':[]}}                                                      | true",
        "{'allow':{'*':[]},'subnets':{'deny':['127.0.0.1/32']}}                  | false",
        // the host network has no hole to leave out: a denied subnet is never widened to it
        "{'allow':{'*':[]},'subnets':{'deny':['10.0.0.0/8']}}                    | false",
        // nor is a rule (the domain would be reached without it)
        "{'allow':{'a.com':[{'response':{'statusCode':403}}],'*':[]}}            | false",
        "{'allow':{'api.example.com':[{'transform':[{'headers':{'A':'b'}}]}]}}   | false",
        "{'mode':'custom','allowedDomains':['example.com']}                      | false",
        "{'mode':'custom','allowedCIDRs':['127.0.0.1/32']}                       | true",
        "{'mode':'custom','allowedDomains':['*'],'deniedCIDRs':['127.0.0.0/8']}  | false",
    })
    void networkDecision(String policy, boolean host) throws Exception {
        assertEquals(host, WirePolicy.parse(JSON.readTree(policy.replace('\'', '"'))).grantsHostNetwork());
    }

    /** The egress the emulator hands its local sandbox: a list as a list, what it cannot emulate as none. */
    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
        "{'mode':'allow-all'}                                           | EgressPolicy[allow-all]",
        "{'mode':'deny-all'}                                            | EgressPolicy[deny-all]",
        "{}                                                             | EgressPolicy[deny-all]",
        "{'allow':[]}                                                   | EgressPolicy[deny-all]",
        "{'allow':['allowed.test','rebind.test']}                       | EgressPolicy[default=deny, allowDomains=[allowed.test, rebind.test]]",
        "{'allow':['Registry.npmjs.org','*.github.com']}                | EgressPolicy[default=deny, allowDomains=[registry.npmjs.org, *.github.com]]",
        "{'allow':{'a.com':[],'b.com':[]}}                              | EgressPolicy[default=deny, allowDomains=[a.com, b.com]]",
        "{'allow':['a.com'],'subnets':{'allow':['10.0.0.0/8'],'deny':['10.1.0.0/16']}} "
            + "| EgressPolicy[default=deny, allowDomains=[a.com], allowCidrs=[10.0.0.0/8], denyCidrs=[10.1.0.0/16]]",
        // deny wins over an allowed subnet wholly inside it: the allowed one goes, the deny stays
        "{'allow':['a.com'],'subnets':{'allow':['10.1.2.0/24'],'deny':['10.1.0.0/16']}} "
            + "| EgressPolicy[default=deny, allowDomains=[a.com], denyCidrs=[10.1.0.0/16]]",
        "{'subnets':{'allow':['10.1.2.0/24'],'deny':['10.1.0.0/16']}}   | EgressPolicy[deny-all]",
        "{'mode':'custom','allowedDomains':['a.com'],'deniedCIDRs':['192.0.2.0/24']} "
            + "| EgressPolicy[default=deny, allowDomains=[a.com], denyCidrs=[192.0.2.0/24]]",
        // default allow with a denied range: the local runner refuses it, LocalMachine then gives no network
        "{'allow':{'*':[]},'subnets':{'deny':['10.0.0.0/8']}}           | EgressPolicy[default=allow, denyCidrs=[10.0.0.0/8]]",
        "{'allow':{'*':[]}}                                             | EgressPolicy[allow-all]",
        "{'subnets':{'allow':['127.0.0.1/32']}}                         | EgressPolicy[allow-all]",
        // forwards and canned answers are not emulated: the domain would be reached instead (transforms with
        // values go to the proxy's header rules: theLocalSandboxsEgressHonoursTheTransformsOrGivesNoNetwork)
        "{'allow':{'a.com':[{'forwardURL':'https://p.example'}]}}       | EgressPolicy[deny-all]",
        "{'allow':{'a.com':[{'response':{'statusCode':403}}],'b.com':[]}} | EgressPolicy[deny-all]",
        "{'allow':{'a.com':[{'response':{'statusCode':403}}],'*':[]}}   | EgressPolicy[deny-all]",
        "{'mode':'custom','allowedDomains':['a.com'],'injectionRules':[{'domain':'a.com','headerNames':['A']}]} "
            + "| EgressPolicy[deny-all]",
        "{'mode':'custom','allowedDomains':['a.com'],'forwardRules':[{'domain':'a.com','forwardURL':'https://p.example'}]} "
            + "| EgressPolicy[deny-all]",
        // names Vercel takes and sandbox4j's model refuses: no guess
        "{'allow':['intranet']}                                         | EgressPolicy[deny-all]",
        "{'allow':['a.com','*.com']}                                    | EgressPolicy[deny-all]",
    })
    void localPolicy(String policy, String local) throws Exception {
        assertEquals(local, WirePolicy.parse(JSON.readTree(policy.replace('\'', '"'))).localPolicy().toString());
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "[]",
        "{'mode':'default-deny'}",
        "{'mode':'allow-all','allow':['a.com']}",
        "{'allow':'a.com'}",
        "{'allow':['']}",
        "{'allow':['a..com']}",
        "{'allow':['http://a.com']}",
        "{'allow':['a.*.com']}",
        "{'allow':['*']}",
        "{'allows':['a.com']}",
        "{'subnets':{'allow':['not-a-cidr']}}",
        "{'subnets':{'allow':'10.0.0.0/8'}}",
        "{'subnets':{'denied':['10.0.0.0/8']}}",
        "{'allow':{'a.com':[{}]}}",
        "{'allow':{'a.com':[{'transform':[],'response':{'statusCode':403}}]}}",
        "{'allow':{'a.com':[{'forwardURL':'http://insecure.example'}]}}",
        "{'allow':{'a.com':[{'transform':[{'headers':{'A':1}}]}]}}",
        "{'allow':{'a.com':{}}}",
        "{'mode':'custom','allowedDomains':'a.com'}",
        "{'mode':'custom','injectionRules':[{'headers':{'A':'b'}}]}",
        "{'allow':{'a.com':[{'match':[],'transform':[{'headers':{'A':'b'}}]}]}}",
        "{'allow':{'a.com':[{'match':{'paths':{'startsWith':'/v1/'}},'transform':[{'headers':{'A':'b'}}]}]}}",
        "{'allow':{'a.com':[{'match':{'path':{'prefix':'/v1/'}},'transform':[{'headers':{'A':'b'}}]}]}}",
        "{'allow':{'a.com':[{'match':{'path':{'startsWith':'/v1/','exact':'/v1/'}},'transform':[{'headers':{'A':'b'}}]}]}}",
        "{'allow':{'a.com':[{'match':{'path':{'startsWith':1}},'transform':[{'headers':{'A':'b'}}]}]}}",
        "{'allow':{'a.com':[{'match':{'method':'GET'},'transform':[{'headers':{'A':'b'}}]}]}}",
        "{'allow':{'a.com':[{'match':{'method':[1]},'transform':[{'headers':{'A':'b'}}]}]}}",
        "{'allow':{'a.com':[{'match':{'headers':[{'name':{'exact':'x'}}]},'transform':[{'headers':{'A':'b'}}]}]}}",
        "{'allow':{'a.com':[{'match':{'queryString':{'key':{'exact':'x'}}},'transform':[{'headers':{'A':'b'}}]}]}}",
        "{'mode':'custom','injectionRules':[{'domain':'a.com','headers':{'A':'b'},'match':{'verb':['GET']}}]}",
    })
    void refusals(String policy) throws Exception {
        assertThrows(WirePolicy.BadPolicyException.class,
                () -> WirePolicy.parse(JSON.readTree(policy.replace('\'', '"'))));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "{'mode':'allow-all'}                                | {'mode':'allow-all'}",
        "{'mode':'deny-all'}                                 | {'mode':'deny-all'}",
        "{'allow':['a.com'],'subnets':{'allow':['10.0.0.0/8'],'deny':['10.1.0.0/16']}} "
            + "| {'mode':'custom','allowedDomains':['a.com'],'allowedCIDRs':['10.0.0.0/8'],'deniedCIDRs':['10.1.0.0/16']}",
        "{'allow':{'a.com':[{'transform':[{'headers':{'Authorization':'Bearer s3cret'}}]}],'*':[]}} "
            + "| {'mode':'custom','allowedDomains':['a.com','*'],'injectionRules':[{'domain':'a.com','headerNames':['Authorization']}]}",
        "{'allow':{'b.com':[{'forwardURL':'https://proxy.example'}]}} "
            + "| {'mode':'custom','allowedDomains':['b.com'],'forwardRules':[{'domain':'b.com','forwardURL':'https://proxy.example'}]}",

        "{'allow':{'a.com':[{'match':{'method':['GET'],'path':{'startsWith':'/v1/'}},'transform':[{'headers':{'X-Key':'s3cret'}}]},"
            + "{'transform':[{'headers':{'Authorization':'s3cret'}}]}]}} "
            + "| {'mode':'custom','allowedDomains':['a.com'],'injectionRules':[{'domain':'a.com','headerNames':['X-Key'],"
            + "'match':{'method':['GET'],'path':{'startsWith':'/v1/'}}},{'domain':'a.com','headerNames':['Authorization']}]}",
    })
    void responseFormNamesHeadersButNeverValues(String request, String response) throws Exception {
        String echoed = WirePolicy.parse(JSON.readTree(request.replace('\'', '"'))).responseForm().toString();
        assertEquals(JSON.readTree(response.replace('\'', '"')), JSON.readTree(echoed));
        assertFalse(echoed.contains("s3cret"));
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
        // no transform: the list itself, through the proxy (localPolicy above), with no header rule
        "{'allow':['a.com']}                                                                       | domains [a.com]",
        "{'mode':'allow-all'}                                                                      | allow-all",
        // transforms the proxy applies exactly: one header rule per rule and header, scoped by its match
        "{'allow':{'a.com':[{'transform':[{'headers':{'X-K':'v1'}}]}]}}                            | a.com X-K  /",
        "{'allow':{'a.com':[{'match':{'method':['GET','POST'],'path':{'startsWith':'/v1/'}},'transform':[{'headers':{'X-K':'v1'}}]}]}} "
            + "| a.com X-K [GET, POST] /v1/",
        "{'allow':{'a.com':[{'match':{'path':{'startsWith':'/v1/'}},'transform':[{'headers':{'X-K':'v1','X-O':'v2'}}]},"
            + "{'transform':[{'headers':{'X-O':'v3'}}]}]}} | a.com X-K  /v1/; a.com X-O  /v1/; a.com X-O  /",
        "{'mode':'custom','allowedDomains':['a.com'],'injectionRules':[{'domain':'a.com','headers':{'X-K':'v1'},"
            + "'match':{'method':['PUT']}}]} | a.com X-K [PUT] /",
        // and those it cannot: no network at all
        "{'allow':{'a.com':[{'transform':[{'headers':{'X-O':'v3'}}]},{'match':{'path':{'startsWith':'/v1/'}},"
            + "'transform':[{'headers':{'X-K':'v1'}}]}]}} | deny-all",
        "{'allow':{'a.com':[{'match':{'path':{'regex':'^/v1/'}},'transform':[{'headers':{'X-K':'v1'}}]}]}}   | deny-all",
        "{'allow':{'a.com':[{'match':{'method':['get']},'transform':[{'headers':{'X-K':'v1'}}]}]}}           | deny-all",
        "{'allow':{'a.com':[{'match':{'queryString':[{'key':{'exact':'x'}}]},'transform':[{'headers':{'X-K':'v1'}}]}]}} | deny-all",
        "{'allow':{'a.com':[{'transform':[{'headers':{'X-K':'v1'}}]}],'*':[]}}                     | deny-all",
        "{'allow':{'a.com':[{'transform':[{'headers':{'X-K':''}}]}]}}                              | deny-all",
        "{'allow':{'*.a.com':[{'transform':[{'headers':{'X-K':'v1'}}]}],'b.a.com':[{'transform':[{'headers':{'X-O':'v1'}}]}]}} | deny-all",
        "{'allow':{'a.com':[{'match':{'method':['GET']},'transform':[{'headers':{'X-K':'v1'}}]},{'forwardURL':'https://p.example'}]}} | deny-all",
    })
    void theLocalSandboxsEgressHonoursTheTransformsOrGivesNoNetwork(String policy, String expected) throws Exception {
        dev.sandbox4j.policy.EgressPolicy local = WirePolicy.parse(JSON.readTree(policy.replace('\'', '"'))).localPolicy();
        String got;
        if (local.isDenyAll()) {
            got = "deny-all";
        } else if (local.isAllowAll()) {
            got = "allow-all";
        } else if (local.headerRules().isEmpty()) {
            got = "domains " + local.allowedDomains();
        } else {
            got = String.join("; ", local.headerRules().stream().map(r -> r.host() + " " + r.header() + " "
                    + (r.methods().isEmpty() ? "" : r.methods().toString()) + " " + r.pathPrefix()).toList());
        }
        assertEquals(expected, got);
    }
}
