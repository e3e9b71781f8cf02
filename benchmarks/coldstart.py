#!/usr/bin/env python3
"""Cold start of the runnable jars, with and without the AppCDS archive the build makes (issue 35, item 5).

    ./mvnw -B -q -o -pl sandbox-cli,sandbox4j-mcp -am package -DskipTests
    python3 benchmarks/coldstart.py [rounds]        # default 9 rounds

Each round starts, in turn, a fresh JVM for: the CLI's `--code print(1)` on the local runner (time to
exit, the result printed) and the MCP server (time from start to its answer to `initialize`), once
plain and once with -XX:SharedArchiveFile. Prints per case the median wall time and the median CPU
(user+sys of the child) over the rounds, and the archive/plain ratio. Interleaved, so load moves both
sides alike; the machine's load average is printed before and after.
"""
import json, os, resource, statistics, subprocess, sys, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
java = os.path.join(os.environ.get("JAVA_HOME", ""), "bin", "java") if os.environ.get("JAVA_HOME") else "java"
cli = os.path.join(root, "sandbox-cli/target/sandbox4j-cli.jar")
mcp = os.path.join(root, "sandbox4j-mcp/target/sandbox4j-mcp.jar")
INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
                   "capabilities": {}, "clientInfo": {"name": "coldstart", "version": "1"}}}) + "\n"


def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_cli(extra):
    c0, t0 = cpu(), time.monotonic()
    out = subprocess.run([java] + extra + ["-jar", cli, "--code", "print(1)"], capture_output=True, text=True)
    t, c = time.monotonic() - t0, cpu() - c0
    if out.returncode != 0 or out.stdout.strip().splitlines()[:1] != ["1"]:
        sys.exit("the CLI run failed: rc %d, %r %r" % (out.returncode, out.stdout[:200], out.stderr[-400:]))
    return t, c


def run_mcp(extra):
    c0, t0 = cpu(), time.monotonic()
    p = subprocess.Popen([java] + extra + ["-jar", mcp, "--provider", "local", "--egress", "deny-all"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    p.stdin.write(INIT)
    p.stdin.flush()
    line = p.stdout.readline()
    t = time.monotonic() - t0
    p.stdin.close()
    p.wait()
    c = cpu() - c0
    if '"id":1' not in line or '"result"' not in line:
        sys.exit("the MCP server did not answer initialize: %r" % line[:200])
    return t, c


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 9
    cases = []
    for name, fn, jar in (("cli print(1)", run_cli, cli), ("mcp initialize", run_mcp, mcp)):
        jsa = jar[:-4] + ".jsa"
        if not os.path.isfile(jsa):
            sys.exit("no archive %s: package on a unix machine without -Dsandbox4j.appcds.skip" % jsa)
        cases.append((name + ", plain", fn, []))
        cases.append((name + ", AppCDS", fn, ["-XX:SharedArchiveFile=" + jsa, "-Xshare:on"]))
    print("load average before: %.1f" % os.getloadavg()[0])
    for _, fn, extra in cases:  # one warm-up each: page cache, not the JVM (every run is a new JVM)
        fn(extra)
    walls = {c[0]: [] for c in cases}
    cpus = {c[0]: [] for c in cases}
    for _ in range(rounds):
        for name, fn, extra in cases:
            w, c = fn(extra)
            walls[name].append(w)
            cpus[name].append(c)
    print("load average after: %.1f" % os.getloadavg()[0])
    print("%-24s %10s %10s" % ("case (%d rounds)" % rounds, "wall s", "cpu s"))
    for name, _, _ in cases:
        print("%-24s %10.3f %10.3f" % (name, statistics.median(walls[name]), statistics.median(cpus[name])))
    for base in ("cli print(1)", "mcp initialize"):
        wp, wa = statistics.median(walls[base + ", plain"]), statistics.median(walls[base + ", AppCDS"])
        cp, ca = statistics.median(cpus[base + ", plain"]), statistics.median(cpus[base + ", AppCDS"])
        print("%-24s wall %.2f, cpu %.2f of plain" % (base + " with AppCDS", wa / wp, ca / cp))


main()
