// One client process of the adapter benchmark (dev.sandbox4j.benchmarks.adapters.AdapterBench): the
// official npm SDK of one provider doing create -> one exec -> teardown cycles, driven over stdin.
// Copied by the harness into conformance/.scratch/<provider>/ (where conformance/ installed the SDK) and
// run there, so that the SDK resolves as it does for the conformance checks.
//   stdin  "batch <cycles> <concurrency>"  -> stdout one JSON line {wallNs, lat (us per cycle), errors, firstError}
//   stdin  "quit"                          -> exit 0
// The provider comes from argv[2]; credentials and URLs from the same environment variables the SDKs read.
import readline from "node:readline";

const provider = process.argv[2];
const code = "print(1)";
// BENCH_SDK_CYCLE=upload (E2B, Vercel): write the code to a file and run the file, as the recorded SDK
// scenarios in /work/shared/providers/recordings do, instead of passing it inline.
const upload = process.env.BENCH_SDK_CYCLE === "upload";

async function e2bCycle() {
  const { Sandbox } = await import("e2b");
  return async () => {
    const sbx = await Sandbox.create({ timeoutMs: 60_000, allowInternetAccess: false });
    try {
      if (upload) {
        await sbx.files.write("main.py", code);
        await sbx.commands.run("python3 main.py");
      } else {
        await sbx.commands.run(`python3 -c '${code}'`);
      }
    } finally {
      await sbx.kill();
    }
  };
}

async function daytonaCycle() {
  const { Daytona } = await import("@daytonaio/sdk");
  const daytona = new Daytona({
    apiKey: process.env.DAYTONA_API_KEY, apiUrl: process.env.DAYTONA_API_URL, target: process.env.DAYTONA_TARGET,
  });
  return async () => {
    const sb = await daytona.create({ language: "python", networkBlockAll: true, ephemeral: true });
    try {
      const r = await sb.process.codeRun(code);
      if (r.exitCode !== 0) throw new Error(`exit ${r.exitCode}`);
    } finally {
      await sb.delete();
    }
  };
}

async function vercelCycle() {
  const { Sandbox } = await import("@vercel/sandbox");
  const emulator = process.env.EMULATOR_URL;
  // The SDK talks to https://vercel.com/api; its public `fetch` option sends that to the emulator.
  const viaEmulator = (input, init) => {
    const original = new URL(typeof input === "string" ? input : input.url);
    return fetch(new URL(original.pathname + original.search, emulator), init);
  };
  const credentials = {
    token: process.env.VERCEL_TOKEN, teamId: process.env.VERCEL_TEAM_ID, projectId: process.env.VERCEL_PROJECT_ID,
  };
  return async () => {
    const sb = await Sandbox.create({
      ...credentials, fetch: viaEmulator, timeout: 60_000, resources: { vcpus: 1 }, networkPolicy: "deny-all",
    });
    try {
      if (upload) {
        await sb.writeFiles([{ path: "main.py", content: Buffer.from(code) }]);
      }
      const done = upload ? await sb.runCommand("python3", ["main.py"]) : await sb.runCommand("python3", ["-c", code]);
      if (done.exitCode !== 0) throw new Error(`exit ${done.exitCode}`);
    } finally {
      await sb.stop();
    }
  };
}

async function modalCycle() {
  const { ModalClient } = await import("modal");
  const modal = new ModalClient();
  const app = await modal.apps.fromName("sandbox4j-bench", { createIfMissing: true });
  const image = modal.images.fromRegistry("python:3.13-slim");
  return async () => {
    const sb = await modal.sandboxes.create(app, image, { blockNetwork: true, timeoutMs: 120_000 });
    try {
      const p = await sb.exec(["python3", "-c", code]);
      const [, , exit] = await Promise.all([p.stdout.readText(), p.stderr.readText(), p.wait()]);
      if (exit !== 0) throw new Error(`exit ${exit}`);
    } finally {
      await sb.terminate();
    }
  };
}

const factories = { e2b: e2bCycle, daytona: daytonaCycle, vercel: vercelCycle, modal: modalCycle };
if (!factories[provider]) {
  console.error(`usage: node worker.mjs <${Object.keys(factories).join("|")}>`);
  process.exit(2);
}
const cycle = await factories[provider]();

async function batch(cycles, concurrency) {
  const lat = [];
  let next = 0, errors = 0, firstError = null;
  const t0 = process.hrtime.bigint();
  const loop = async () => {
    while (next < cycles) {
      next++;
      const s = process.hrtime.bigint();
      try {
        await cycle();
        lat.push(Number((process.hrtime.bigint() - s) / 1000n));
      } catch (e) {
        errors++;
        firstError ??= String(e && e.message ? e.message : e).slice(0, 300);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  const wallNs = Number(process.hrtime.bigint() - t0);
  return { wallNs, lat, errors, firstError };
}

console.log("ready");
const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) {
  const [cmd, a, b] = line.trim().split(/\s+/);
  if (cmd === "batch") {
    console.log(JSON.stringify(await batch(Number(a), Number(b))));
  } else if (cmd === "quit") {
    break;
  }
}
process.exit(0);
