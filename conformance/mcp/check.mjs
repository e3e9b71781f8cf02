// The official MCP TypeScript SDK's client against sandbox4j-mcp.jar over stdio, plus raw frames a
// careless client sends. Env: MCP_SDK_DIR (where the SDK is installed), MCP_JAR (the server jar).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
const sdk = process.env.MCP_SDK_DIR + '/node_modules/@modelcontextprotocol/sdk/dist/esm';
const { Client } = await import(sdk + '/client/index.js');
const { StdioClientTransport } = await import(sdk + '/client/stdio.js');
const jar = process.env.MCP_JAR;
let failures = 0;
function check(ok, what) { console.log((ok ? 'ok   ' : 'FAIL ') + what); if (!ok) failures++; }
const args = ['-jar', jar, '--provider', 'local', '--egress', 'deny-all', '--max-timeout', '60'];

// 1. the SDK's own flow: list, call, refusals against the schema, cancellation
const transport = new StdioClientTransport({ command: 'java', args, stderr: 'ignore' });
const client = new Client({ name: 'sandbox4j-conformance', version: '1' });
await client.connect(transport);
const tools = await client.listTools();
check(tools.tools.length === 1 && tools.tools[0].name === 'run_code', 'tools/list offers run_code');
const ran = await client.callTool({ name: 'run_code', arguments: { code: 'print(6*7)' } });
check(!ran.isError && ran.content[0].text.includes('\n42\n'), 'tools/call runs the code');
const neg = await client.callTool({ name: 'run_code', arguments: { code: 'print(1)', timeoutSeconds: -5 } });
check(neg.isError && neg.content[0].text.includes('at least 1'), 'timeoutSeconds -5 refused as the schema says');
const net = await client.callTool({ name: 'run_code', arguments: { code: 'print(1)', network: 'allow-all' } });
check(net.isError && net.content[0].text.includes("unknown argument 'network'"), 'an argument outside the schema is refused');
const abort = new AbortController();
const started = Date.now();
const long = client.callTool({ name: 'run_code', arguments: { code: 'import time\ntime.sleep(50)', timeoutSeconds: 55 } },
  undefined, { signal: abort.signal });
setTimeout(() => abort.abort('user'), 3000);
let aborted = false;
try { await long; } catch (e) { aborted = true; }
check(aborted && Date.now() - started < 40000, 'an aborted call is cancelled (the SDK sends notifications/cancelled)');
const after = await client.callTool({ name: 'run_code', arguments: { code: 'print(2)' } });
check(!after.isError, 'the next call is served after a cancellation');
await client.close();

// 2. raw frames: each bad one answered, the next served; stdin EOF ends the process at once
const p = spawn('java', args, { stdio: ['pipe', 'pipe', 'ignore'] });
const lines = createInterface({ input: p.stdout });
const answers = [];
let waiter = null;
lines.on('line', (l) => { answers.push(JSON.parse(l)); if (waiter) waiter(); });
const next = () => new Promise((res) => { if (answers.length) res(answers.shift()); else waiter = () => { waiter = null; res(answers.shift()); }; });
const send = (s) => p.stdin.write(s + '\n');
send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }));
await next();
send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
for (const [frame, code] of [['not json', -32700], ['[{"jsonrpc":"2.0","id":5,"method":"ping"}]', -32600],
  ['{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600],
  ['{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"run_code","arguments":"print(1)"}}', -32602]]) {
  send(frame);
  const a = await next();
  check(a.error && a.error.code === code, `${frame} -> ${code}`);
  send(JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'ping' }));
  const pong = await next();
  check(pong.id === 99 && pong.result !== undefined, '  and the next frame is served');
}
send(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'run_code', arguments: { code: 'import time\ntime.sleep(50)' } } }));
await new Promise((r) => setTimeout(r, 3000));
const closed = Date.now();
const exited = new Promise((res) => p.on('exit', (c) => res(c)));
p.stdin.end();
const status = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), 30000))]);
check(status === 0, `stdin EOF during a call ends the server (exit ${status} after ${Date.now() - closed} ms)`);
if (status === 'timeout') p.kill('SIGKILL');
console.log(failures ? `${failures} check(s) failed` : 'all checks passed');
process.exit(failures ? 1 : 0);
