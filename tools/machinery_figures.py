"""The structure figures quoted in notes on the tokenizer machinery, for one checkout (run by hand):

    python tools/machinery_figures.py [ROOT]

isinstance tests on algorithm classes outside their folder, getattr/hasattr probes, name tables keyed
by algorithm names outside the registry, comparisons with positional kinds, folder tangles in core
(strongly connected folders), modules over 400 lines and README lines. Reads the source with `ast`
(through tests/structure.py), imports nothing of tokviz."""
import ast, sys
from collections import defaultdict
from pathlib import Path
ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]).resolve()
sys.path.insert(0, str(ROOT / 'tests'))
import importlib
S = importlib.import_module('structure')
mods = S.load_modules(ROOT / 'tokviz')
ALGO_DIRS = ('tokviz.core.bpe', 'tokviz.core.wordpiece', 'tokviz.core.unigram', 'tokviz.core.pretrained', 'tokviz.core.formats')
algo_classes = {}
for m in mods.values():
    if m.name.startswith(ALGO_DIRS):
        top = next(d for d in ALGO_DIRS if m.name.startswith(d))
        for node in m.tree.body:
            if isinstance(node, ast.ClassDef):
                algo_classes.setdefault(node.name, top)
def names_in(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
isinst = 0; probes = 0; tables = 0; big = 0; details = defaultdict(int)
for m in mods.values():
    text_lines = m.lines
    if text_lines > 400: big += 1
    for node in ast.walk(m.tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == 'isinstance' and len(node.args) == 2:
                hit = [c for c in names_in(node.args[1]) if c in algo_classes and not m.name.startswith(algo_classes[c])]
                if hit:
                    isinst += 1; details[m.name] += 1
            if node.func.id == 'hasattr' or (node.func.id == 'getattr' and len(node.args) == 3):
                probes += 1
        if isinstance(node, ast.Dict) and m.name not in ('tokviz.core.registry', 'tokviz.core.algorithm.registry'):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            if len(keys & {'bpe', 'wordpiece', 'unigram'}) >= 2:
                tables += 1
# positional switches: comparisons with positional kind names outside core/embeddings registry
POS = {'rope', 'alibi', 'sinusoidal', 'learned', 'trained'}
pos = 0
for m in mods.values():
    for node in ast.walk(m.tree):
        if isinstance(node, ast.Compare):
            consts = {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
            if consts & POS: pos += 1
# folder graph in core
def folder(name):
    parts = name.split('.')
    if len(parts) < 2 or parts[1] != 'core': return None
    if len(parts) == 2: return None
    if len(parts) == 3 and not mods[name].is_package: return name
    return '.'.join(parts[:3])
g = defaultdict(set)
for m in mods.values():
    a = folder(m.name)
    if a is None: continue
    for t in m.imports:
        b = folder(t) if t in mods else None
        if b and a != b: g[a].add(b)
idx, low, st, on, sccs, c = {}, {}, [], set(), [], [0]
sys.setrecursionlimit(10000)
def visit(v):
    idx[v]=low[v]=c[0]; c[0]+=1; st.append(v); on.add(v)
    for w in g[v]:
        if w not in idx: visit(w); low[v]=min(low[v],low[w])
        elif w in on: low[v]=min(low[v],idx[w])
    if low[v]==idx[v]:
        grp=[]
        while True:
            w=st.pop(); on.discard(w); grp.append(w)
            if w==v: break
        if len(grp)>1: sccs.append(sorted(grp))
for n in sorted(set(g) | {b for v in g.values() for b in v}):
    if n not in idx: visit(n)
tangle_edges = sum(1 for grp in sccs for a in grp for b in g[a] if b in grp)
readme = len((ROOT / 'README.md').read_text().splitlines())
print(f"isinstance on algorithm classes outside their folder: {isinst}")
print(f"getattr(x, name, default)/hasattr probes: {probes}")
print(f"name tables keyed by algorithm names outside the registry: {tables}")
print(f"positional kind comparisons: {pos}")
print(f"core folder tangles: {len(sccs)} ({', '.join(str(len(s)) + ' folders' for s in sccs) or 'none'}), arrows inside tangles: {tangle_edges}")
print(f"modules over 400 lines: {big}; max: {max(m.lines for m in mods.values())}")
print(f"README lines: {readme}")
print("isinstance by module:", dict(sorted(details.items(), key=lambda kv: -kv[1])[:12]))
