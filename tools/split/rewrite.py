#!/usr/bin/env python3
"""Step (b) of the sandbox4j split (issue 32): rewrite every reference to a moved type.

Reads tools/split/moves.tsv and, over the whole tree (every tracked or untracked file that is not
ignored, outside target/ and .git/):

1. replaces each old fully qualified name (and its slash form dev/sandbox4j/..., with the module
   prefix when a path names the module) by the new one, in *.java, *.xml, *.md, *.kt, *.properties,
   *.imports, *.yml, *.yaml, *.sh, *.txt, *.json and META-INF/services files;
2. replaces a reference to an old package as a package (dev.sandbox4j.api.tool; {@link ...tool})
   by the new package;
3. sets each Java file's package declaration to the package its path says, when the declared one is
   an old package this mapping moved types out of;
4. adds an import for every type a Java file named by its simple name because it shared the file's
   old package, when the type now lives in another package (public types only; a file in
   sandbox-api never gets an import of a type in another module: those are printed as UPWARD for a
   hand edit);
5. renames META-INF/services/<old name> files to the new name.

It is idempotent: run it again (for example after merging a branch that added files using the old
names) and it changes only what still uses an old name. It never changes behaviour: names only.
"""
import os
import re
import subprocess
import sys

ROOT = subprocess.check_output(['git', 'rev-parse', '--show-toplevel'], text=True).strip()
os.chdir(ROOT)
MOVES = os.path.join('tools', 'split', 'moves.tsv')

classes = []   # (old_fqn, new_fqn, module)
packages = []  # (old_pkg, new_pkg)
for line in open(MOVES, encoding='utf-8'):
    line = line.rstrip('\n')
    if not line or line.startswith('#'):
        continue
    parts = line.split('\t')
    if parts[0] == 'class':
        classes.append((parts[1], parts[2], parts[3]))
    elif parts[0] == 'package':
        packages.append((parts[1], parts[2]))
    else:
        sys.exit('moves.tsv: unknown line kind: ' + line)

def pkg_of(fqn):
    return fqn.rsplit('.', 1)[0]

def simple(fqn):
    return fqn.rsplit('.', 1)[1]

real = [(o, n, m) for (o, n, m) in classes if not o.endswith('.package-info')]
old_packages = {pkg_of(o) for (o, _, _) in classes}

TEXT_EXT = ('.java', '.xml', '.md', '.kt', '.properties', '.imports', '.yml', '.yaml', '.sh',
            '.txt', '.json')
SKIP = {MOVES, os.path.join('tools', 'split', 'rewrite.py'), os.path.join('tools', 'split', 'README.md')}

def files():
    out = subprocess.check_output(['git', 'ls-files', '-z', '--cached', '--others', '--exclude-standard'])
    for f in out.decode('utf-8').split('\0'):
        if not f or f in SKIP or '/target/' in '/' + f or not os.path.isfile(f):
            continue
        if f.endswith(TEXT_EXT) or '/META-INF/services/' in f:
            yield f

# 1 and 2: names. Longest first so a name never matches inside a longer one's replacement.
subs = []
for o, n, m in sorted(real, key=lambda r: -len(r[0])):
    op, np_ = o.replace('.', '/'), n.replace('.', '/')
    # a path that names the module: sandbox-api/src/main/java/dev/sandbox4j/api/tool/ToolCall
    subs.append((re.compile(r'(?<![\w-])[\w-]+(/src/(?:main|test)/java/)' + re.escape(op) + r'(?![\w$])'),
                 lambda mt, np_=np_, m=m: m + mt.group(1) + np_))
    subs.append((re.compile(r'(?<![\w$./])' + re.escape(op) + r'(?![\w$])'), np_))
    subs.append((re.compile(r'(?<![\w$.])' + re.escape(o) + r'(?![\w$])'), n))
for o, n in sorted(packages, key=lambda r: -len(r[0])):
    # a package reference: not followed by a word character, nor by '.' and a word character
    subs.append((re.compile(r'(?<![\w$.])' + re.escape(o) + r'(?![\w$])(?!\.[\w$])'), n))

changed = set()
java_files = []
declared_before = {}
for f in files():
    try:
        text = open(f, encoding='utf-8').read()
    except UnicodeDecodeError:
        continue
    if f.endswith('.java'):
        java_files.append(f)
        mdecl = re.search(r'^package\s+([\w.]+)\s*;', text, re.M)
        declared_before[f] = mdecl.group(1) if mdecl else None
    new = text
    for rx, rep in subs:
        new = rx.sub(rep, new)
    if new != text:
        open(f, 'w', encoding='utf-8').write(new)
        changed.add(f)

# 3: package declarations follow the path
SRC = re.compile(r'^([\w.-]+)/src/(main|test)/java/(.+)/([\w$-]+)\.java$')
info = {}  # file -> (module, main|test, path package, simple name)
for f in java_files:
    m = SRC.match(f)
    if m:
        info[f] = (m.group(1), m.group(2), m.group(3).replace('/', '.'), m.group(4))
warnings = []
for f in java_files:
    if f not in info or declared_before.get(f) not in old_packages:
        continue
    path_pkg = info[f][2]
    text = open(f, encoding='utf-8').read()
    new = re.sub(r'^package\s+[\w.]+\s*;', 'package ' + path_pkg + ';', text, count=1, flags=re.M)
    if new != text:
        open(f, 'w', encoding='utf-8').write(new)
        changed.add(f)
    emptied = old_packages - {pkg_of(n) for (_, n, _) in classes}
    if declared_before[f] == path_pkg and path_pkg in emptied and info[f][3] != 'package-info':
        fqn = path_pkg + '.' + info[f][3]
        if not any(o == fqn for (o, _, _) in classes):
            warnings.append('NOT IN MOVES: %s stays in %s, a package this split empties: add a line to %s'
                            % (f, path_pkg, MOVES))

# 4: imports for types that shared the file's old package
def is_public(f, name):
    try:
        t = open(f, encoding='utf-8').read()
    except OSError:
        return False
    return re.search(r'^public\s+(?:(?:final|abstract|sealed|non-sealed|static|strictfp)\s+)*'
                     r'(?:class|interface|enum|record|@interface)\s+' + re.escape(name) + r'\b', t, re.M) is not None

by_pkg = {}  # package -> list of (simple, current package, module, kind, file)
for f, (mod, kind, pkg, name) in info.items():
    if name == 'package-info':
        continue
    by_pkg.setdefault(pkg, []).append((name, pkg, mod, kind, f))
old_to_new = {o: (n, m) for (o, n, m) in real}
for o, (n, m) in old_to_new.items():
    # a moved type is a member of its old package as far as its old neighbours are concerned
    npkg, nname = pkg_of(n), simple(n)
    entries = [e for e in by_pkg.get(npkg, []) if e[0] == nname]
    for e in entries:
        by_pkg.setdefault(pkg_of(o), []).append((nname, npkg, e[2], e[3], e[4]))

def body_uses(text, name):
    body = re.sub(r'^(?:package|import)\s[^;]*;', '', text, flags=re.M)
    return re.search(r'(?<![\w$.])' + re.escape(name) + r'(?![\w$])', body) is not None

for f in java_files:
    if f not in info:
        continue
    p0 = declared_before.get(f)
    if p0 is None:
        continue
    mod, kind, p1, own = info[f]
    seen = set()
    candidates = []
    for (name, pkg, cmod, ckind, cf) in by_pkg.get(p0, []):
        if name == own or pkg == p1 or (name, pkg) in seen:
            continue
        if ckind == 'test' and kind == 'main':
            continue
        # every candidate lived beside the file before the split (a resident of its old package,
        # or a type moved out of it) and lives elsewhere now
        seen.add((name, pkg))
        candidates.append((name, pkg, cmod, cf))
    if not candidates:
        continue
    text = open(f, encoding='utf-8').read()
    imported = set(re.findall(r'^import\s+(?:static\s+)?[\w.]*?\.(\w+)\s*;', text, re.M))
    adds = []
    for name, pkg, cmod, cf in candidates:
        if name in imported or not body_uses(text, name):
            continue
        if not is_public(cf, name):
            warnings.append('NOT PUBLIC: %s names %s.%s, which is not public: fix by hand' % (f, pkg, name))
            continue
        if mod == 'sandbox-api' and cmod != 'sandbox-api':
            warnings.append('UPWARD: %s names %s.%s (module %s): fix by hand' % (f, pkg, name, cmod))
            continue
        adds.append('import %s.%s;' % (pkg, name))
    if not adds:
        continue
    lines = text.split('\n')
    last_import = max((i for i, l in enumerate(lines) if re.match(r'import\s', l)), default=None)
    if last_import is None:
        pk = next(i for i, l in enumerate(lines) if re.match(r'package\s', l))
        lines[pk + 1:pk + 1] = [''] + sorted(adds)
    else:
        lines[last_import + 1:last_import + 1] = sorted(adds)
    open(f, 'w', encoding='utf-8').write('\n'.join(lines))
    changed.add(f)

# 5: service files named by an old type
for f in list(files()):
    if '/META-INF/services/' not in f:
        continue
    d, base = f.rsplit('/', 1)
    if base in old_to_new:
        dest = d + '/' + old_to_new[base][0]
        tracked = subprocess.run(['git', 'ls-files', '--error-unmatch', f], capture_output=True).returncode == 0
        if tracked:
            subprocess.check_call(['git', 'mv', f, dest])
        else:
            os.rename(f, dest)
        changed.add(dest)

for w in warnings:
    print(w, file=sys.stderr)
print('rewrite: %d files changed' % len(changed))
