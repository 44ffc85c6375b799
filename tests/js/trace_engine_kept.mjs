// Reads Trace Event Format JSON files with Chrome DevTools' trace engine (the npm package
// @paulirish/trace_engine, the Performance panel's parser) and prints, per file, how many
// complete ("X") events each track (pid:tid) held and how many the engine kept in its tree.
// An X event that starts inside another on its track and ends after it is dropped there
// (TreeHelpers.treify, "ends after parent"): an overlap shows up as kept < given.
//
//   node trace_engine_kept.mjs TRACE.json [...]   ->   {"TRACE.json": {"1:10": [given, kept]}}
import fs from 'node:fs';
import {polyfillDOMRect} from '@paulirish/trace_engine/analyze-trace.mjs';
import * as Trace from '@paulirish/trace_engine';

polyfillDOMRect();
const out = {};
for (const path of process.argv.slice(2)) {
  const json = JSON.parse(fs.readFileSync(path, 'utf8'));
  const events = json.traceEvents ?? json;
  const model = Trace.TraceModel.Model.createWithAllHandlers();
  await model.parse(events);
  const parsed = model.parsedTrace();
  const tracks = {};
  for (const e of events) {
    if (e.ph === 'X') {
      const key = `${e.pid}:${e.tid}`;
      tracks[key] = tracks[key] ?? [0, 0];
      tracks[key][0] += 1;
    }
  }
  for (const [pid, proc] of parsed.data.Renderer.processes) {
    for (const [tid, thread] of proc.threads) {
      const key = `${pid}:${tid}`;
      for (const entry of thread.entries) {
        if (entry.ph === 'X' && parsed.data.Renderer.entryToNode.has(entry) && tracks[key]) {
          tracks[key][1] += 1;
        }
      }
    }
  }
  out[path] = tracks;
}
process.stdout.write(JSON.stringify(out) + '\n');
