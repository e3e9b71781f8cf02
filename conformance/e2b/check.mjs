// The official E2B SDKs (`e2b`, `@e2b/code-interpreter`) against the sandbox4j E2B emulator.
// Expects E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY to point at the emulator; the SDKs are
// resolved from the scratch folder run.sh installed them into. Exits 0 when every check passes.
import { createRequire } from 'node:module'
import path from 'node:path'

const sdkDir = process.env.E2B_SDK_DIR
if (!sdkDir) {
  console.error('E2B_SDK_DIR is not set (run conformance/run.sh e2b)')
  process.exit(2)
}
const require = createRequire(path.join(sdkDir, 'package.json'))
const e2b = require('e2b')
const { Sandbox: CodeInterpreter } = require('@e2b/code-interpreter')
const { Sandbox, CommandExitError, TimeoutError, AuthenticationError } = e2b

let failures = 0
let checks = 0
function check(name, ok, detail) {
  checks++
  if (ok) {
    console.log(`ok   ${name}`)
  } else {
    failures++
    console.log(`FAIL ${name}${detail === undefined ? '' : ': ' + JSON.stringify(detail)}`)
  }
}
async function expectThrow(name, fn, cls, more = () => true) {
  try {
    const r = await fn()
    check(name, false, { resolved: r })
  } catch (e) {
    check(name, e instanceof cls && more(e), { error: `${e?.constructor?.name}: ${e?.message}` })
  }
}

const created = []
try {
  // ---- the base template: create, files.write, commands.run, kill
  const marker = `conformance-${process.pid}`
  const sbx = await Sandbox.create({ timeoutMs: 60_000, allowInternetAccess: false, metadata: { suite: marker } })
  created.push(sbx)
  check('create returns a sandbox id', /^i[a-z0-9]{20}$/.test(sbx.sandboxId), sbx.sandboxId)

  const written = await sbx.files.write('main.py',
    'import sys\nprint("hello from main.py")\nprint("warning: something", file=sys.stderr)\n')
  check('files.write answers the resolved path', written.path === '/home/user/main.py', written)

  const run = await sbx.commands.run('python3 main.py')
  check('commands.run stdout', run.stdout === 'hello from main.py\n', run.stdout)
  check('commands.run stderr', run.stderr === 'warning: something\n', run.stderr)
  check('commands.run exit code', run.exitCode === 0, run.exitCode)

  const envs = await sbx.commands.run('echo "$GREETING from $(pwd)"', { envs: { GREETING: "it's me" } })
  check('commands.run with envs', envs.stdout.startsWith("it's me from "), envs.stdout)

  await expectThrow('a non-zero exit is CommandExitError', () => sbx.commands.run('echo out; exit 3'),
    CommandExitError, (e) => e.exitCode === 3 && e.stdout === 'out\n')

  await expectThrow('a command past its timeoutMs is TimeoutError',
    () => sbx.commands.run('sleep 20', { timeoutMs: 1500 }), TimeoutError)

  // Output while the command runs (the SDK's onStdout callback): a latch, not a timing. The command
  // waits for a file this check writes only once its first chunk arrived; output sent only at the end
  // would arrive after the command's own timeout, and the command would end non-zero.
  {
    let seen = ''
    let firstChunk
    const first = new Promise((resolve) => { firstChunk = resolve })
    const streamed = sbx.commands.run('echo ready; for i in $(seq 1 400); do [ -e go ] && break; sleep 0.05; done; [ -e go ] && echo done',
      { onStdout: (data) => { seen += data; firstChunk() }, timeoutMs: 30_000 })
    const raced = await Promise.race([first.then(() => 'chunk'), streamed.then(() => 'ended', () => 'ended')])
    check('commands.run onStdout: the first chunk arrives while the command runs', raced === 'chunk' && seen === 'ready\n', { raced, seen })
    await sbx.files.write('go', '')
    const done = await streamed.then((r) => r, (e) => e)
    check('commands.run onStdout: the command, released after its first chunk, ends 0 with all its output',
      done.exitCode === 0 && seen === 'ready\ndone\n' && done.stdout === 'ready\ndone\n', { exitCode: done.exitCode, seen, stdout: done.stdout })
  }

  const bg = await sbx.commands.run('sleep 30', { background: true })
  check('a background command has a pid', typeof bg.pid === 'number', bg.pid)
  check('kill() of a running command', (await bg.kill()) === true)
  const waited = await bg.wait().then(() => 'resolved', (e) => e)
  check('the killed command ends with -1', waited instanceof CommandExitError && waited.exitCode === -1,
    waited instanceof Error ? waited.message : waited)

  const read = await sbx.files.read('main.py')
  check('files.read returns what was written', read.startsWith('import sys'), read)

  // files the code wrote come back byte for byte through envd's GET /files, as sandbox4j reads them
  await sbx.commands.run(`python3 -c "open('all.bin', 'wb').write(bytes(range(256)))"`)
  const bytes = await sbx.files.read('all.bin', { format: 'bytes' })
  check('files.read bytes: all 256 byte values exact', bytes.length === 256 && bytes.every((b, i) => b === i),
    Array.from(bytes.slice(0, 8)))
  // filesystem.Filesystem/ListDir, which sandbox4j uses to collect files by glob
  await sbx.commands.run('mkdir -p out && printf abc > out/a.txt && ln -s /etc out/etc-link')
  const listed = await sbx.files.list('out')
  const a = listed.find((e) => e.name === 'a.txt')
  check('files.list: a file with its size and absolute path, and the link listed',
    a && a.size === 3 && a.path === '/home/user/out/a.txt' && listed.some((e) => e.name === 'etc-link'),
    listed.map((e) => ({ name: e.name, type: e.type, size: e.size, path: e.path })))
  // the emulator reads through the local runner, which follows no link out of the workspace
  await sbx.commands.run('ln -s /etc/hostname link-out')
  await expectThrow('files.read of a link to a host file is refused', () => sbx.files.read('link-out'), Error)

  const page = await Sandbox.list({ query: { metadata: { suite: marker } } }).nextItems()
  check('list by metadata finds exactly this sandbox', page.length === 1 && page[0].sandboxId === sbx.sandboxId,
    page.map((p) => p.sandboxId))

  const info = await sbx.getInfo()
  check('getInfo shows the metadata', info.metadata?.suite === marker, info.metadata)

  await sbx.setTimeout(120_000)
  check('setTimeout is accepted', true)

  check('kill() destroys the sandbox', (await sbx.kill()) === true)
  created.pop()
  check('kill() again answers false (404)', (await Sandbox.kill(sbx.sandboxId)) === false)

  // ---- the code interpreter template: runCode
  const ci = await CodeInterpreter.create()
  created.push(ci)
  const ex = await ci.runCode('print(1)')
  check('runCode stdout', ex.logs.stdout.join('') === '1\n', ex.logs)
  check('runCode executionCount', ex.executionCount === 1, ex.executionCount)
  check('runCode no error', ex.error === undefined, ex.error)
  const bad = await ci.runCode('raise ValueError("bad input")')
  check('runCode error name and value', bad.error?.name === 'ValueError' && bad.error?.value === 'bad input', bad.error)
  const js = await ci.runCode('console.log(6 * 7)', { language: 'javascript' })
  check('runCode javascript', js.logs.stdout.join('') === '42\n', js.logs)
  check('code interpreter kill', (await ci.kill()) === true)
  created.pop()

  // ---- a wrong API key
  await expectThrow('a wrong API key is AuthenticationError',
    () => Sandbox.create({ apiKey: 'e2b_not_the_right_key_000000000000' }), AuthenticationError)
} catch (e) {
  failures++
  console.log(`FAIL unexpected: ${e?.constructor?.name}: ${e?.stack ?? e}`)
} finally {
  for (const s of created) {
    await s.kill().catch(() => undefined)
  }
}

console.log(`${checks - failures}/${checks} checks passed`)
process.exit(failures === 0 && checks > 0 ? 0 : 1)
