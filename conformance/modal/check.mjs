// The official Modal JS SDK (npm modal@0.11.1) against the sandbox4j Modal emulator.
// Run by conformance/modal/run.sh with MODAL_SERVER_URL, MODAL_TOKEN_ID, MODAL_TOKEN_SECRET and
// EMULATOR_RECORD_URL (the emulator's record of what it received) set.
// The SDK speaks gRPC to the control plane and, for exec, to the command router URL the emulator
// returns; both on loopback. Each check compares what the SDK was given with what the emulator recorded.
import { ModalClient } from "modal";
import net from "node:net";
import assert from "node:assert/strict";

const recordUrl = process.env.EMULATOR_RECORD_URL;
const record = async () => (await fetch(recordUrl)).json();
const sandboxRecord = async (id) => {
  const r = (await record()).sandboxes.find((s) => s.id === id);
  assert.ok(r, `the emulator has no record of ${id}`);
  return r;
};

// A loopback listener counting the bytes it receives: the egress canary.
let canaryBytes = 0;
const canary = net.createServer((socket) => socket.on("data", (d) => { canaryBytes += d.length; }));
await new Promise((resolve) => canary.listen(0, "127.0.0.1", resolve));
const canaryPort = canary.address().port;
const knock = `import socket,sys\ntry:\n s=socket.create_connection(('127.0.0.1',${canaryPort}),timeout=3)\n s.sendall(b'knock')\n s.close()\nexcept OSError as e:\n print('blocked:',e);sys.exit(3)`;

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

async function run(sb, argv, params) {
  const p = await sb.exec(argv, params);
  const [stdout, stderr, code] = await Promise.all([p.stdout.readText(), p.stderr.readText(), p.wait()]);
  return { stdout, stderr, code };
}

const created = [];
// V2 is the 0.11.1 default; the V1 family needs MODAL_SANDBOX_V2=false when the client is made.
const modal = new ModalClient();
process.env.MODAL_SANDBOX_V2 = "false";
const modalV1 = new ModalClient();
delete process.env.MODAL_SANDBOX_V2;

let app, image, blocked, allowlisted, v1;
try {
  await check("app and image (EnvironmentGetOrCreate, ImageGetOrCreate, ImageJoinStreaming)", async () => {
    app = await modal.apps.fromName("sandbox4j-conformance", { createIfMissing: true });
    assert.match(app.appId, /^ap-/);
    image = modal.images.fromRegistry("python:3.13-slim");
  });

  await check("create V2, network blocked, 1 CPU, 512 MiB, 120 s: the emulator recorded exactly that", async () => {
    blocked = await modal.sandboxes.create(app, image, {
      blockNetwork: true, cpu: 1, memoryMiB: 512, timeoutMs: 120_000, workdir: "/tmp", command: ["sleep", "infinity"],
    });
    created.push(blocked);
    assert.ok(!/^sb-[0-9A-Za-z]{22}$/.test(blocked.sandboxId), `a V2 id: ${blocked.sandboxId}`);
    const r = await sandboxRecord(blocked.sandboxId);
    assert.equal(r.version, "V2");
    assert.equal(r.timeoutSecs, 120);
    assert.equal(r.milliCpu, 1000);
    assert.equal(r.memoryMb, 512);
    assert.equal(r.workdir, "/tmp");
    assert.equal(r.networkAccess.type, "BLOCKED");
    assert.equal(r.hostNetwork, false);
  });

  await check("exec Python: stdout, stderr, exit code, argv byte for byte, workdir", async () => {
    const tricky = "it's $(no) `no` \"q\" naïve ✓";
    const code = `import os,sys\nprint(${JSON.stringify(tricky)}, os.getcwd())\nprint('warn', file=sys.stderr)`;
    const out = await run(blocked, ["python3", "-c", code], { timeoutMs: 30_000 });
    assert.equal(out.code, 0);
    assert.equal(out.stdout, `${tricky} /tmp\n`);
    assert.equal(out.stderr, "warn\n");
    const r = await sandboxRecord(blocked.sandboxId);
    const e = r.execs[r.execs.length - 1];
    assert.deepEqual(e.argv, ["python3", "-c", code]);
    assert.equal(e.timeoutSecs, 30);
    assert.equal(e.stdoutConfig, 1, "PIPE");
    assert.equal(e.stderrConfig, 1, "PIPE");
  });

  await check("exec Bash: a non-zero exit, env, workdir", async () => {
    const out = await run(blocked, ["bash", "-c", "echo \"$GREETING\" from $(pwd); echo oops >&2; exit 7"], {
      env: { GREETING: "hi there" }, workdir: "/usr",
    });
    assert.equal(out.code, 7);
    assert.equal(out.stdout, "hi there from /usr\n");
    assert.equal(out.stderr, "oops\n");
    const r = await sandboxRecord(blocked.sandboxId);
    assert.deepEqual(r.execs[r.execs.length - 1].envNames, ["GREETING"]);
  });

  await check("exec with stdout ignored: DEVNULL recorded, nothing read", async () => {
    const out = await run(blocked, ["bash", "-c", "echo hidden; echo shown >&2"], { stdout: "ignore" });
    assert.equal(out.code, 0);
    assert.equal(out.stdout, "");
    assert.equal(out.stderr, "shown\n");
    const r = await sandboxRecord(blocked.sandboxId);
    assert.equal(r.execs[r.execs.length - 1].stdoutConfig, 0, "DEVNULL");
  });

  await check("exec timeout: the emulator kills the command at timeout_secs (signal 9)", async () => {
    const started = Date.now();
    const p = await blocked.exec(["bash", "-c", "sleep 30"], { timeoutMs: 2_000 });
    let outcome;
    try {
      outcome = await p.wait();
    } catch (e) {
      outcome = String(e.message); // the SDK's own deadline can pass first ("Deadline exceeded")
    }
    assert.ok(outcome === 137 || /Deadline exceeded/.test(outcome), `unexpected outcome ${outcome}`);
    assert.ok(Date.now() - started < 20_000, "the timeout did not end the command");
    let e;
    for (let i = 0; i < 100; i++) {
      const r = await sandboxRecord(blocked.sandboxId);
      e = r.execs[r.execs.length - 1];
      if (e.signal !== undefined || e.code !== undefined) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(e.timeoutSecs, 2);
    assert.equal(e.signal, 9, JSON.stringify(e));
  });

  await check("egress: a blocked sandbox does not reach the canary", async () => {
    const out = await run(blocked, ["python3", "-c", knock], {});
    assert.equal(out.code, 3, out.stdout + out.stderr);
    assert.equal(canaryBytes, 0);
  });

  await check("create with a CIDR allowlist admitting the canary; egress reaches it", async () => {
    allowlisted = await modal.sandboxes.create(app, image, { outboundCidrAllowlist: ["127.0.0.1/32"], timeoutMs: 60_000 });
    created.push(allowlisted);
    const r = await sandboxRecord(allowlisted.sandboxId);
    assert.equal(r.networkAccess.type, "ALLOWLIST");
    assert.deepEqual(r.networkAccess.allowedCidrs, ["127.0.0.1/32"]);
    assert.equal(r.hostNetwork, true);
    const out = await run(allowlisted, ["python3", "-c", knock], {});
    assert.equal(out.code, 0, out.stdout + out.stderr);
    assert.ok(canaryBytes > 0, "the canary received nothing");
  });

  await check("create with an allowlist that does not admit the canary: blocked", async () => {
    const before = canaryBytes;
    const other = await modal.sandboxes.create(app, image, { outboundCidrAllowlist: ["10.0.0.0/8"], timeoutMs: 60_000 });
    created.push(other);
    assert.equal((await sandboxRecord(other.sandboxId)).hostNetwork, false);
    const out = await run(other, ["python3", "-c", knock], {});
    assert.equal(out.code, 3, out.stdout + out.stderr);
    assert.equal(canaryBytes, before);
    await other.terminate();
  });

  await check("V1 family (MODAL_SANDBOX_V2=false): SandboxCreate, task id, router access, exec", async () => {
    const appV1 = await modalV1.apps.fromName("sandbox4j-conformance", { createIfMissing: true });
    v1 = await modalV1.sandboxes.create(appV1, modalV1.images.fromRegistry("python:3.13-slim"), {
      blockNetwork: true, timeoutMs: 60_000, tags: { "sandbox4j-run": "conformance" },
    });
    created.push(v1);
    assert.match(v1.sandboxId, /^sb-[0-9A-Za-z]{22}$/);
    const r = await sandboxRecord(v1.sandboxId);
    assert.equal(r.version, "V1");
    assert.equal(r.tags["sandbox4j-run"], "conformance");
    const out = await run(v1, ["bash", "-c", "echo v1; exit 3"], {});
    assert.deepEqual([out.stdout, out.code], ["v1\n", 3]);
    const listed = [];
    for await (const sb of modalV1.sandboxes.list({ appId: appV1.appId, tags: { "sandbox4j-run": "conformance" } })) {
      listed.push(sb.sandboxId);
    }
    assert.deepEqual(listed, [v1.sandboxId]);
  });

  // The emulated filesystem is the local sandbox's working directory, /sandbox (the emulator's note).
  await check("filesystem (the SDK's fs tool): the code's file read, listed, stat'ed; a file written over stdin read by the code", async () => {
    const sb = await modal.sandboxes.create(app, image, { blockNetwork: true, timeoutMs: 60_000 });
    created.push(sb);
    const made = await run(sb, ["python3", "-c", "import os\nos.makedirs('/sandbox/out', exist_ok=True)\nopen('/sandbox/out/report.txt','w').write('naïve ✓\\n')\nos.symlink('/etc/hostname', '/sandbox/out/link')"], {});
    assert.equal(made.code, 0, made.stderr);
    assert.equal(await sb.filesystem.readText("/sandbox/out/report.txt"), "naïve ✓\n");
    const bytes = await sb.filesystem.readBytes("/sandbox/out/report.txt");
    assert.equal(bytes.length, Buffer.byteLength("naïve ✓\n"));
    const listed = await sb.filesystem.listFiles("/sandbox/out");
    assert.deepEqual(listed.map((e) => [e.name, e.type]), [["link", "symlink"], ["report.txt", "file"]]);
    assert.equal(listed[0].symlinkTarget, "/etc/hostname");
    assert.equal(listed[1].size, Buffer.byteLength("naïve ✓\n"));
    const st = await sb.filesystem.stat("/sandbox/out");
    assert.equal(st.type, "directory");
    await assert.rejects(sb.filesystem.readText("/sandbox/out/missing"), (e) => e.name === "SandboxFilesystemNotFoundError");
    await assert.rejects(sb.filesystem.readText("/sandbox/out"), (e) => e.name === "SandboxFilesystemIsADirectoryError");
    await sb.filesystem.makeDirectory("/sandbox/in/deep");
    await sb.filesystem.writeText("from the SDK ✓", "/sandbox/in/deep/note.txt");
    const back = await run(sb, ["cat", "/sandbox/in/deep/note.txt"], {});
    assert.equal(back.stdout, "from the SDK ✓");
    const r = await sandboxRecord(sb.sandboxId);
    const tools = r.execs.filter((e) => e.argv[0] === "/__modal/.bin/modal-sandbox-fs-tools").map((e) => Object.keys(JSON.parse(e.argv[1]))[0]);
    assert.deepEqual([...new Set(tools)].sort(), ["ListFiles", "MakeDirectory", "ReadFile", "Stat", "WriteFile"]);
    await sb.terminate();
  });

  await check("output while the code runs: the first chunk arrives while the code still sleeps", async () => {
    const sb = await modal.sandboxes.create(app, image, { blockNetwork: true, timeoutMs: 60_000 });
    created.push(sb);
    // prints, flushes, then sleeps far past this check: only streaming delivers the line before the end
    const p = await sb.exec(["python3", "-c", "import time\nprint('first', flush=True)\ntime.sleep(600)"], { timeoutMs: 60_000 });
    const reader = p.stdout.getReader();
    let seen = "";
    while (!seen.includes("first\n")) {
      const { value, done } = await reader.read();
      assert.ok(!done, `stdout ended before the first line: ${JSON.stringify(seen)}`);
      seen += value;
    }
    assert.equal(seen, "first\n");
    assert.equal(await p._poll(), null, "the code had already ended");
    reader.releaseLock();
    await sb.terminate();
  });

  await check("a command killed by a signal: TaskExecWait answers signal 9, the SDK reports 137", async () => {
    const out = await run(blocked, ["bash", "-c", "kill -9 $$"], {});
    assert.equal(out.code, 137);
    const r = await sandboxRecord(blocked.sandboxId);
    assert.equal(r.execs[r.execs.length - 1].signal, 9, JSON.stringify(r.execs[r.execs.length - 1]));
  });

  await check("by name and tags (V2): SandboxGetFromNameV2, SandboxTagsSetV2 replaces the set, SandboxTagsGetV2", async () => {
    const named = await modal.sandboxes.create(app, image, { blockNetwork: true, timeoutMs: 60_000, name: "conformance-named" });
    created.push(named);
    const found = await modal.sandboxes.fromName("sandbox4j-conformance", "conformance-named");
    assert.equal(found.sandboxId, named.sandboxId);
    await assert.rejects(modal.sandboxes.fromName("sandbox4j-conformance", "no-such-name"), (e) => e.name === "NotFoundError");
    await named.setTags({ a: "1", b: "2" });
    assert.deepEqual(await found.getTags(), { a: "1", b: "2" });
    await named.setTags({ c: "3" });
    assert.deepEqual(await named.getTags(), { c: "3" });
    await named.terminate();
  });

  await check("terminate (V2 and V1); wait reports TERMINATED (137)", async () => {
    for (const sb of [blocked, allowlisted, v1]) {
      await sb.terminate();
      assert.equal(await sb.wait(), 137);
    }
  });

  await check("a wrong token secret is refused (UNAUTHENTICATED)", async () => {
    const bad = new ModalClient({ tokenId: process.env.MODAL_TOKEN_ID, tokenSecret: "as-wrong" });
    await assert.rejects(bad.apps.fromName("sandbox4j-conformance", { createIfMissing: true }),
      (e) => e.code === 16 || /UNAUTHENTICATED|x-modal-token/.test(String(e.message)));
    bad.close?.();
  });

  // Faults: the emulator's knobs as the official SDK meets them (set through the emulator's HTTP side door).
  const fault = async (q) => {
    const r = await fetch(recordUrl.replace("/_emulator/record", `/_emulator/faults?${q}`), { method: "POST" });
    assert.equal(r.status, 200, await r.text());
  };

  await check("fault: UNAVAILABLE on create, the SDK retries; one sandbox", async () => {
    const before = (await record()).ledger.created;
    await fault("failCreate=503:1");
    const fired = (await record()).faultsFired.failedCreates;
    const sb = await modal.sandboxes.create(app, image, { blockNetwork: true, timeoutMs: 60_000 });
    created.push(sb);
    assert.equal((await record()).ledger.created, before + 1);
    assert.equal((await record()).faultsFired.failedCreates, fired + 1, "the fault did not fire");
    await sb.terminate();
  });

  await check("fault: throttled create (RESOURCE_EXHAUSTED + RPCRetryPolicy 1 s), the SDK waits and retries", async () => {
    const before = (await record()).ledger.created;
    await fault("rateLimitCreate=1:1");
    const fired = (await record()).faultsFired.throttledCreates;
    const started = Date.now();
    const sb = await modal.sandboxes.create(app, image, { blockNetwork: true, timeoutMs: 60_000 });
    created.push(sb);
    assert.ok(Date.now() - started >= 900, "the SDK did not wait the server's retry_after_secs");
    assert.equal((await record()).faultsFired.throttledCreates, fired + 1, "the fault did not fire");
    assert.equal((await record()).ledger.created, before + 1);
    await sb.terminate();
  });

  await check("fault: a create whose answer is lost; the SDK's retry (same idempotency key) gets the same sandbox", async () => {
    const before = (await record()).ledger.created;
    await fault("loseCreateResponse=1");
    const fired = (await record()).faultsFired.lostCreates;
    const sb = await modal.sandboxes.create(app, image, { blockNetwork: true, timeoutMs: 60_000 });
    created.push(sb);
    const r = await record();
    assert.equal(r.ledger.created, before + 1, "the retry made a second sandbox");
    assert.equal(r.faultsFired.lostCreates, fired + 1, "the fault did not fire");
    assert.ok(r.sandboxes.some((s) => s.id === sb.sandboxId && !s.finished));
    await sb.terminate();
  });

  await check("fault: a stdout stream dropped mid-run; the SDK resumes at its offset", async () => {
    const sb = await modal.sandboxes.create(app, image, { blockNetwork: true, timeoutMs: 60_000 });
    created.push(sb);
    await fault("dropStream=1");
    const fired = (await record()).faultsFired.droppedStreams;
    const out = await run(sb, ["bash", "-c", "seq 1 5000"], {});
    let want = "";
    for (let i = 1; i <= 5000; i++) want += `${i}\n`;
    assert.equal(out.code, 0);
    assert.equal(out.stdout, want);
    assert.equal((await record()).faultsFired.droppedStreams, fired + 1, "the fault did not fire");
    await sb.terminate();
  });

  await check("fault: terminate fails twice (UNAVAILABLE), the SDK's retries end the sandbox", async () => {
    const sb = await modal.sandboxes.create(app, image, { blockNetwork: true, timeoutMs: 60_000 });
    created.push(sb);
    await fault("failTeardown=503:2");
    const fired = (await record()).faultsFired.failedTerminates;
    await sb.terminate();
    assert.equal((await sandboxRecord(sb.sandboxId)).finished, true);
    assert.equal((await record()).faultsFired.failedTerminates, fired + 2, "the fault did not fire twice");
  });

  await check("the emulator's ledger: every sandbox torn down", async () => {
    const r = await record();
    console.log(`     RPCs the emulator served: ${JSON.stringify(r.calls)}`);
    assert.equal(r.ledger.live, 0, JSON.stringify(r.ledger));
    assert.equal(r.ledger.created, created.length);
  });
} finally {
  for (const sb of created) {
    await sb.terminate().catch(() => {});
  }
  canary.close();
  modal.close?.();
  modalV1.close?.();
}

const failed = checks.filter((c) => !c.ok).length;
console.log(`\n${checks.length - failed}/${checks.length} checks passed`);
process.exit(failed === 0 ? 0 : 1);
