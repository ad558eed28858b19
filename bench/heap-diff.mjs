#!/usr/bin/env node
// Compares two V8 heap snapshots (the soak's BENCH_HEAP_SNAPSHOTS checkpoints) by constructor:
// `node bench/heap-diff.mjs before.heapsnapshot after.heapsnapshot [rows]` prints the
// constructors whose retained objects grew most, by self size, with their counts.
import { readFileSync } from 'node:fs';

function summarize(path) {
  const snap = JSON.parse(readFileSync(path, 'utf8'));
  const meta = snap.snapshot.meta;
  const fields = meta.node_fields;
  const stride = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const types = meta.node_types[typeAt];
  const byName = new Map();
  for (let i = 0; i < snap.nodes.length; i += stride) {
    const type = types[snap.nodes[i + typeAt]];
    const name = type === 'object' || type === 'closure' ? snap.strings[snap.nodes[i + nameAt]] : `(${type})`;
    const entry = byName.get(name) ?? { count: 0, size: 0 };
    entry.count += 1;
    entry.size += snap.nodes[i + sizeAt];
    byName.set(name, entry);
  }
  return byName;
}

const [before, after, rows = '30'] = process.argv.slice(2);
if (!before || !after) {
  console.error('usage: node bench/heap-diff.mjs before.heapsnapshot after.heapsnapshot [rows]');
  process.exit(2);
}
const a = summarize(before);
const b = summarize(after);
const names = new Set([...a.keys(), ...b.keys()]);
const diff = [...names].map((name) => {
  const x = a.get(name) ?? { count: 0, size: 0 };
  const y = b.get(name) ?? { count: 0, size: 0 };
  return { name, count: y.count - x.count, size: y.size - x.size, after: y.size };
});
diff.sort((p, q) => q.size - p.size);
const kib = (n) => (n / 1024).toFixed(1);
console.log('self KiB Δ\tcount Δ\tKiB after\tconstructor');
for (const row of diff.slice(0, Number(rows))) console.log(`${kib(row.size)}\t${row.count}\t${kib(row.after)}\t${row.name.slice(0, 80)}`);
