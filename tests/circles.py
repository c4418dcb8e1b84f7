"""Circles between the files of each crate (issue 41: "no circle between files"). Run by
.ci/run over every crate's sources; exits 1 naming each circle and its arrows.

    python3 tests/circles.py [--strict] SRC_DIR...

Circles between the files of each crate: file A -> file B when A names an item of B's
module (use paths and inline paths through crate::, self::, super::). A child naming an
item of a module above it (its parent's types) is left out unless --strict."""
import os, re, sys, itertools
def crate_files(src):
    mods = {}  # module path tuple -> file
    def walk(path, modpath):
        mods[modpath] = path
        text = open(path).read()
        text_nt = re.split(r'\n#\[cfg\(test\)\]\s*\nmod tests', text)[0]
        base = os.path.dirname(path)
        stem = os.path.splitext(os.path.basename(path))[0]
        sub = base if stem in ('lib', 'main', 'mod') else os.path.join(base, stem)
        for m in re.finditer(r'(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;', text_nt):
            name = m.group(1)
            for cand in (os.path.join(sub, name + '.rs'), os.path.join(sub, name, 'mod.rs')):
                if os.path.exists(cand):
                    walk(cand, modpath + (name,))
                    break
    root = os.path.join(src, 'lib.rs') if os.path.exists(os.path.join(src, 'lib.rs')) else os.path.join(src, 'main.rs')
    walk(root, ())
    return mods
def edges(mods):
    files = {v: k for k, v in mods.items()}
    out = {f: set() for f in files}
    for f, modpath in files.items():
        text = re.split(r'\n#\[cfg\(test\)\]\s*\nmod tests', open(f).read())[0]
        text = re.sub(r'//[^\n]*', '', text)
        paths = []
        for m in re.finditer(r'\buse\s+([^;]+);', text):
            body = m.group(1)
            prefix = re.match(r'([\w:]*?)(::\{|$)', body)
            head = body.split('{')[0].rstrip(':')
            items = re.findall(r'[\w:]+', body.split('{', 1)[1]) if '{' in body else ['']
            for it in items:
                paths.append((head + '::' + it).strip(':') if it else head)
        paths += re.findall(r'\b((?:crate|super|self)(?:::\w+)+)', text)
        for p in paths:
            segs = p.split('::')
            if segs[0] == 'crate': cur = (); segs = segs[1:]
            elif segs[0] == 'self': cur = modpath; segs = segs[1:]
            elif segs[0] == 'super':
                cur = modpath
                while segs and segs[0] == 'super': cur = cur[:-1]; segs = segs[1:]
            else: continue
            for s in segs:
                if cur + (s,) in mods: cur = cur + (s,)
                else: break
            tgt = mods[cur]
            if STRICT or not (len(cur) < len(modpath) and modpath[:len(cur)] == cur):
                if tgt != f: out[f].add(tgt)
    return out
def cycles(g):
    idx, low, st, on, res, n = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)
    def sc(v):
        idx[v] = low[v] = n[0]; n[0] += 1; st.append(v); on.add(v)
        for w in g[v]:
            if w not in idx: sc(w); low[v] = min(low[v], low[w])
            elif w in on: low[v] = min(low[v], idx[w])
        if low[v] == idx[v]:
            comp = []
            while True:
                w = st.pop(); on.discard(w); comp.append(w)
                if w == v: break
            if len(comp) > 1: res.append(comp)
    for v in g:
        if v not in idx: sc(v)
    return res
STRICT = '--strict' in sys.argv
found = 0
for src in [a for a in sys.argv[1:] if a != '--strict']:
    g = edges(crate_files(src))
    for c in cycles(g):
        found += 1
        print(src, 'CIRCLE:', ' <-> '.join(sorted(c)))
        for a in c:
            for b in g[a]:
                if b in c: print('   ', a, '->', b)
print(f"circles: {found} found" if found else "circles: none between the files of any crate")
sys.exit(1 if found else 0)
