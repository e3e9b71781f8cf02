// The official @daytonaio/sdk's main flow against the sandbox4j Daytona emulator.
// Run by conformance/daytona/run.sh with DAYTONA_API_URL, DAYTONA_API_KEY and DAYTONA_TARGET set.
// Prints one line per check, then what the SDK sent (from the emulator's /_emulator/calls), and exits
// 0 only when every check passed and no sandbox was left behind.
import {
  Daytona,
  DaytonaNotFoundError,
  DaytonaTimeoutError,
  DaytonaValidationError,
} from "@daytonaio/sdk";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import net from "node:net";

const apiUrl = process.env.DAYTONA_API_URL;
const base = apiUrl.replace(/\/api$/, "");
const daytona = new Daytona({ apiKey: process.env.DAYTONA_API_KEY, apiUrl, target: process.env.DAYTONA_TARGET });
const runTag = `conf-${process.pid}-${Date.now()}`;

// A loopback listener counting the bytes each tagged connection sends: the egress canary.
const received = new Map();
const canary = net.createServer((socket) => {
  let tag = null;
  let buffered = "";
  socket.on("data", (d) => {
    if (tag === null) {
      buffered += d.toString("latin1");
      const nl = buffered.indexOf("\n");
      if (nl < 0) return;
      tag = buffered.slice(0, nl);
      received.set(tag, (received.get(tag) ?? 0) + buffered.length);
    } else {
      received.set(tag, (received.get(tag) ?? 0) + d.length);
    }
  });
  socket.on("error", () => {});
});
await new Promise((resolve) => canary.listen(0, "127.0.0.1", resolve));
const canaryPort = canary.address().port;
const knock = (tag) => [
  "import socket",
  "try:",
  `    s = socket.create_connection(('127.0.0.1', ${canaryPort}), timeout=5)`,
  `    s.sendall(b'${tag}\\n' + b'x' * 1024)`,
  "    s.close()",
  "    print('SENT')",
  "except OSError as e:",
  "    print('BLOCKED', type(e).__name__)",
].join("\n");
const waitForBytes = async (tag) => {
  for (let i = 0; i < 100 && !received.get(tag); i++) await new Promise((r) => setTimeout(r, 50));
  return received.get(tag) ?? 0;
};

const checks = [];
async function check(name, fn) {
  try {
    await fn();
    checks.push({ name, ok: true });
    console.log(`ok   ${name}`);
  } catch (e) {
    checks.push({ name, ok: false });
    console.log(`FAIL ${name}: ${e && e.stack ? e.stack : e}`);
  }
}

const created = [];
let sandbox;
try {
  await check("create (networkBlockAll, ephemeral, autoStopInterval 5) waits through `starting` to `started`", async () => {
    sandbox = await daytona.create({
      language: "python",
      networkBlockAll: true,
      ephemeral: true,
      autoStopInterval: 5,
      labels: { "conformance-run": runTag },
    });
    created.push(sandbox);
    assert.equal(sandbox.state, "started");
    assert.match(sandbox.id, /^[0-9a-f-]{36}$/);
    assert.equal(sandbox.networkBlockAll, true);
  });

  await check("process.codeRun: stdout and stderr in one result, exit code 0", async () => {
    const r = await sandbox.process.codeRun("import sys\nprint(6 * 7, flush=True)\nprint('to stderr', file=sys.stderr)", undefined, 10);
    assert.equal(r.exitCode, 0);
    assert.equal(r.result, "42\nto stderr\n");
    assert.deepEqual(r.artifacts.charts, []);
  });

  await check("process.codeRun under networkBlockAll cannot reach the host (canary)", async () => {
    const r = await sandbox.process.codeRun(knock("deny-all"), undefined, 20);
    assert.match(r.result, /^BLOCKED/);
  });

  await check("fs.uploadFile then process.executeCommand with cwd and env", async () => {
    await sandbox.fs.uploadFile(Buffer.from("import os\nprint('hi', os.environ['FOO'], os.getcwd())\n"), "/tmp/main.py");
    const r = await sandbox.process.executeCommand("python3 /tmp/main.py", "/tmp", { FOO: "bar" }, 10);
    assert.equal(r.exitCode, 0);
    assert.equal(r.result, "hi bar /tmp\n");
  });

  await check("process.executeCommand: a shell line, its exit code and merged output", async () => {
    const r = await sandbox.process.executeCommand("echo out; echo err >&2; exit 3", undefined, undefined, 10);
    assert.equal(r.exitCode, 3);
    assert.equal(r.result, "out\nerr\n");
  });

  await check("process.executeCommand past its timeout throws DaytonaTimeoutError (408)", async () => {
    await assert.rejects(sandbox.process.executeCommand("echo partial; sleep 30", undefined, undefined, 1), (e) => {
      assert.ok(e instanceof DaytonaTimeoutError, `got ${e && e.constructor && e.constructor.name}: ${e}`);
      assert.equal(e.statusCode, 408);
      return true;
    });
  });

  await check("process.getSessionCommandLogs with callbacks: output arrives over the WebSocket while the command runs", async () => {
    await sandbox.process.createSession("conf-stream");
    const started = await sandbox.process.executeSessionCommand("conf-stream", {
      command: "python3 -u -c 'import sys, time; print(\"first\", flush=True); print(\"err\", file=sys.stderr, flush=True); time.sleep(30)'",
      runAsync: true,
    });
    assert.ok(started.cmdId, "runAsync answers a command id");
    let out = "";
    let err = "";
    let firstSeen;
    const first = new Promise((resolve) => (firstSeen = resolve));
    const followed = sandbox.process.getSessionCommandLogs("conf-stream", started.cmdId,
      (chunk) => { out += chunk; firstSeen(); }, (chunk) => { err += chunk; });
    let timer;
    await Promise.race([first, new Promise((_, reject) => { timer = setTimeout(() => reject(new Error("no output within 20 s")), 20000); })]);
    clearTimeout(timer);
    const running = await sandbox.process.getSessionCommand("conf-stream", started.cmdId);
    assert.equal(running.exitCode, undefined, "the command still runs when its first output arrived");
    assert.equal(out, "first\n");
    await sandbox.process.deleteSession("conf-stream"); // kills the sleeping command; the daemon closes the log
    await followed;
    assert.equal(err, "err\n");
  });

  await check("a session command's log followed to its end, then its exit code and its stdout/stderr apart", async () => {
    await sandbox.process.createSession("conf-ended");
    const started = await sandbox.process.executeSessionCommand("conf-ended", { command: "echo out; echo err >&2; exit 3", runAsync: true });
    let out = "";
    let err = "";
    await sandbox.process.getSessionCommandLogs("conf-ended", started.cmdId, (c) => { out += c; }, (c) => { err += c; });
    assert.equal(out, "out\n");
    assert.equal(err, "err\n");
    assert.equal((await sandbox.process.getSessionCommand("conf-ended", started.cmdId)).exitCode, 3);
    const logs = await sandbox.process.getSessionCommandLogs("conf-ended", started.cmdId);
    assert.equal(logs.stdout, "out\n");
    assert.equal(logs.stderr, "err\n");
    await sandbox.process.deleteSession("conf-ended");
  });

  await check("fs.downloadFile: a file the code wrote, all 256 byte values exact (files/bulk-download)", async () => {
    const w = await sandbox.process.executeCommand(
      "python3 -c \"open('all.bin', 'wb').write(bytes(range(256))); import os; os.symlink('/etc/hostname', 'link-out')\"",
      undefined, undefined, 10);
    assert.equal(w.exitCode, 0, w.result);
    const buf = await sandbox.fs.downloadFile("all.bin");
    assert.equal(buf.length, 256);
    buf.forEach((b, i) => assert.equal(b, i));
  });

  await check("fs.downloadFile of a link out of the workspace is refused (the emulator follows no link)", async () => {
    await assert.rejects(sandbox.fs.downloadFile("link-out"));
  });

  await check("daytona.list({labels}) finds the sandbox by its label", async () => {
    const ids = [];
    for await (const s of daytona.list({ labels: { "conformance-run": runTag } })) ids.push(s.id);
    assert.deepEqual(ids, [sandbox.id]);
  });

  await check("daytona.get(id)", async () => {
    const again = await daytona.get(sandbox.id);
    assert.equal(again.id, sandbox.id);
    assert.equal(again.state, "started");
  });

  await check("control: networkAllowList 127.0.0.1/32 reaches the canary (so the zero above can fail)", async () => {
    const open = await daytona.create({ language: "python", networkAllowList: "127.0.0.1/32", ephemeral: true });
    created.push(open);
    const r = await open.process.codeRun(knock("control"), undefined, 20);
    assert.equal(r.result, "SENT\n");
    assert.ok((await waitForBytes("control")) > 1024, "the canary received the control's bytes");
    assert.equal(received.get("deny-all") ?? 0, 0, "bytes reached the canary under networkBlockAll");
  });

  await check("networkBlockAll silently wins over an allow list (Daytona's documented quirk)", async () => {
    const mixed = await daytona.create({ language: "python", networkBlockAll: true, networkAllowList: "127.0.0.1/32" });
    created.push(mixed);
    const r = await mixed.process.codeRun(knock("mixed"), undefined, 20);
    assert.match(r.result, /^BLOCKED/);
    assert.equal(received.get("mixed") ?? 0, 0);
  });

  await check("create with 11 networks throws DaytonaValidationError with the server's message", async () => {
    const eleven = Array.from({ length: 11 }, (_, i) => `10.0.${i}.0/24`).join(",");
    await assert.rejects(daytona.create({ language: "python", networkAllowList: eleven }), (e) => {
      assert.ok(e instanceof DaytonaValidationError, `got ${e && e.constructor && e.constructor.name}: ${e}`);
      assert.match(e.message, /Network allow list cannot contain more than 10 networks/);
      return true;
    });
  });
} finally {
  for (const s of created) {
    await check(`sandbox.delete() ${s.id.slice(0, 8)}`, async () => {
      await s.delete();
      await assert.rejects(daytona.get(s.id), DaytonaNotFoundError);
    });
  }
  canary.close();
}

await check("the emulator's ledger: nothing left running", async () => {
  const ledger = await (await fetch(`${base}/_emulator/ledger`)).json();
  assert.equal(ledger.live, 0, JSON.stringify(ledger));
  assert.equal(ledger.created, created.length);
});

// What the SDK sent, as the emulator received it (the key is never recorded).
const { calls } = await (await fetch(`${base}/_emulator/calls`)).json();
writeFileSync("calls.json", JSON.stringify(calls, null, 2));
const shape = (p) => p.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, "{id}");
const seen = new Map();
for (const c of calls) {
  const key = `${c.method} ${shape(c.path)}${c.query ? "?" + c.query.replace(/=[^&]*/g, "=…") : ""} -> ${c.status}`;
  seen.set(key, (seen.get(key) ?? 0) + 1);
}
console.log("\nrequests the SDK made (count, method, path, status):");
for (const [k, n] of seen) console.log(`  ${String(n).padStart(3)}  ${k}`);
const first = calls.find((c) => c.method === "POST" && c.path === "/api/sandbox");
if (first) {
  console.log("first create body:", JSON.stringify(first.body));
  const h = first.headers;
  console.log("headers:", ["authorization", "x-daytona-source", "x-daytona-sdk-version", "user-agent", "accept"]
    .map((k) => `${k}: ${h[k]}`).join("; "));
}
for (const c of calls.filter((c) => c.path.includes("/toolbox/"))) {
  console.log(`toolbox ${c.method} ${shape(c.path)} body: ${JSON.stringify(c.body)}`);
}

const failed = checks.filter((c) => !c.ok);
console.log(`\n${checks.length - failed.length}/${checks.length} checks passed`);
process.exit(failed.length === 0 ? 0 : 1);
