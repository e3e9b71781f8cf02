// The official @vercel/sandbox SDK's main flow against the sandbox4j Vercel emulator.
// Run by conformance/vercel/run.sh with EMULATOR_URL, VERCEL_TOKEN, VERCEL_TEAM_ID, VERCEL_PROJECT_ID set.
// The SDK talks to https://vercel.com/api; its public `fetch` option rewrites that to the emulator.
import { Sandbox } from "@vercel/sandbox";
import net from "node:net";
import assert from "node:assert/strict";

const emulator = process.env.EMULATOR_URL;
const credentials = {
  token: process.env.VERCEL_TOKEN,
  teamId: process.env.VERCEL_TEAM_ID,
  projectId: process.env.VERCEL_PROJECT_ID,
};
const sent = [];

// Records what the SDK sent (never the token) and forwards it to the emulator.
const viaEmulator = async (input, init = {}) => {
  const original = new URL(typeof input === "string" ? input : input.url);
  assert.equal(original.origin, "https://vercel.com", `unexpected SDK target ${original.origin}`);
  const url = new URL(original.pathname + original.search, emulator);
  const headers = new Headers(init.headers);
  const entry = {
    method: init.method ?? "GET",
    path: original.pathname,
    query: [...url.searchParams.keys()].sort().join(","),
    contentType: headers.get("content-type"),
    bearer: (headers.get("authorization") ?? "").startsWith("Bearer "),
    body: typeof init.body === "string" ? init.body : init.body ? `<${init.body.length ?? "?"} bytes>` : "",
  };
  sent.push(entry);
  const response = await fetch(url, init);
  entry.status = response.status;
  entry.responseType = response.headers.get("content-type");
  return response;
};

// A loopback listener counting the bytes it receives: the egress canary.
let canaryBytes = 0;
const canary = net.createServer((socket) => socket.on("data", (d) => { canaryBytes += d.length; }));
await new Promise((resolve) => canary.listen(0, "127.0.0.1", resolve));
const canaryPort = canary.address().port;
const knock = `const s=require('net').connect(${canaryPort},'127.0.0.1',()=>{s.end('knock');});`
  + `s.on('close',()=>process.exit(0));s.on('error',e=>{console.log('blocked:'+e.code);process.exit(3);});`;

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

let sandbox;
try {
  await check("create (deny-all, 1 vCPU, 60 s)", async () => {
    sandbox = await Sandbox.create({
      ...credentials,
      fetch: viaEmulator,
      timeout: 60_000,
      resources: { vcpus: 1 },
      networkPolicy: "deny-all",
    });
    assert.ok(sandbox.name, "sandbox name");
    assert.equal(sandbox.status, "running");
  });

  await check("writeFiles", async () => {
    await sandbox.writeFiles([
      { path: "hello.js", content: Buffer.from("console.log('hello from stdout');\nconsole.error('warning on stderr');\nconsole.log(process.argv.slice(2).join('|'));\n") },
      { path: "canary.js", content: Buffer.from(knock) },
      { path: "data/in.txt", content: Buffer.from("from a file\n") },
    ]);
  });

  await check("runCommand: stdout, stderr, exit code, argv byte for byte", async () => {
    const tricky = "it's $(no) `no` \"q\" naïve ✓";
    const done = await sandbox.runCommand("node", ["hello.js", tricky, "b"]);
    assert.equal(done.exitCode, 0);
    assert.equal(await done.stdout(), `hello from stdout\n${tricky}|b\n`);
    assert.equal(await done.stderr(), "warning on stderr\n");
  });

  await check("runCommand: cwd, env and a file written before", async () => {
    const done = await sandbox.runCommand({
      cmd: "bash", args: ["-c", "cat in.txt; echo \"$GREETING\"; exit 7"],
      cwd: "/vercel/sandbox/data", env: { GREETING: "hi there" },
    });
    assert.equal(done.exitCode, 7);
    assert.equal(await done.stdout(), "from a file\nhi there\n");
  });

  await check("runCommand: timeoutMs is enforced by the sandbox", async () => {
    const done = await sandbox.runCommand({ cmd: "bash", args: ["-c", "echo started; sleep 30"], timeoutMs: 500 });
    assert.notEqual(done.exitCode, 0);
    assert.equal(await done.stdout(), "started\n");
  });

  await check("egress: deny-all blocks the canary", async () => {
    const done = await sandbox.runCommand("node", ["canary.js"]);
    assert.equal(done.exitCode, 3, await done.stdout());
    assert.equal(canaryBytes, 0);
  });

  await check("egress: allow-all (updateNetworkPolicy) reaches the canary", async () => {
    await sandbox.updateNetworkPolicy("allow-all");
    const done = await sandbox.runCommand("node", ["canary.js"]);
    assert.equal(done.exitCode, 0, await done.stdout());
    assert.ok(canaryBytes > 0, "the canary received nothing");
  });

  await check("detached command, kill, wait", async () => {
    const cmd = await sandbox.runCommand({ cmd: "sleep", args: ["30"], detached: true });
    await cmd.kill("SIGKILL");
    const done = await cmd.wait();
    assert.notEqual(done.exitCode, 0);
  });

  await check("readFileToBuffer", async () => {
    const buf = await sandbox.readFileToBuffer({ path: "data/in.txt" });
    assert.equal(buf.toString(), "from a file\n");
  });

  await check("readFileToBuffer: a file the code wrote, all 256 byte values exact", async () => {
    const done = await sandbox.runCommand("node", ["-e",
      "const fs = require('fs'); fs.writeFileSync('all.bin', Buffer.from([...Array(256).keys()])); fs.symlinkSync('/etc/hostname', 'link-out')"]);
    assert.equal(done.exitCode, 0, await done.stderr());
    const buf = await sandbox.readFileToBuffer({ path: "all.bin" });
    assert.equal(buf.length, 256);
    buf.forEach((b, i) => assert.equal(b, i));
  });

  await check("readFileToBuffer: a link out of the workspace is not followed (null, as for a missing file)", async () => {
    assert.equal(await sandbox.readFileToBuffer({ path: "link-out" }), null);
  });

  await check("runCommand: output arrives while the command runs (the SDK's stdout stream)", async () => {
    const { Writable } = await import("node:stream");
    let seen = "";
    let firstChunk;
    const first = new Promise((resolve) => { firstChunk = resolve; });
    const stdout = new Writable({ write(chunk, _enc, cb) { seen += chunk.toString(); firstChunk(); cb(); } });
    // a latch, not a timing: the command waits for a file this check writes only once the first chunk came;
    // output sent only at the end would come after the command's own timeout killed it
    const run = sandbox.runCommand({ cmd: "bash", args: ["-c", "echo ready; while [ ! -e go ]; do sleep 0.05; done; echo done"],
      stdout, timeoutMs: 30_000 });
    await first;
    assert.equal(seen, "ready\n");
    await sandbox.writeFiles([{ path: "go", content: Buffer.from("") }]);
    const done = await run;
    assert.equal(done.exitCode, 0, "the command was not released by the file written after its first chunk");
    assert.equal(seen, "ready\ndone\n");
  });

  await check("stop", async () => {
    await sandbox.stop();
    assert.equal(sandbox.status, "stopped");
  });

  await check("a wrong token is refused with the API's error shape", async () => {
    await assert.rejects(
      Sandbox.create({ ...credentials, token: "wrong-token", fetch: viaEmulator }),
      (e) => e.response?.status === 403 && e.json?.error?.code === "forbidden",
    );
  });
} finally {
  canary.close();
}

console.log("\nHTTP requests the SDK sent (method path [query keys] content-type -> status response-type):");
for (const s of sent) {
  console.log(`  ${s.method} ${s.path} [${s.query}] ${s.contentType ?? "-"} bearer=${s.bearer} -> ${s.status} ${s.responseType ?? "-"}`);
  if (s.body) console.log(`      ${s.body}`);
}
const failed = checks.filter((c) => !c.ok).length;
console.log(`\n${checks.length - failed}/${checks.length} checks passed`);
process.exit(failed === 0 ? 0 : 1);
