// The official @ai-sdk/harness HarnessAgent on the workloads of `python -m benchmarks
// --official`: a request/response server on stdin/stdout, one JSON object per line, so
// the Python benchmark can interleave its own runs with these in one process lifetime
// (warm JIT, like the warm Python interpreter).
//
//   {"op": "versions"}                                    -> {"ok": true, node, harness}
//   {"op": "load", "name": "...", "turn": [part, ...]}    -> {"ok": true, parts}
//   {"op": "run", "name": "...", "mode": "agent"|"adapter", "turns": n, "sessions": n}
//       -> {"ok": true, seconds, cpuSeconds, parts, turns, rssGrowthBytes}
//   anything that fails                                   -> {"ok": false, error}
//
// The turns arrive from Python (benchmarks/_scripted.py builds them), so both agents
// consume the same wire parts. The scripted adapter mirrors the Python one: every turn
// emits the loaded parts as they are, one part per event-loop turn (setImmediate after
// each, as anyio's checkpoint yields once to the loop), inside the promise `done`; the
// built-in `bash` (Claude Code's `Bash`) is declared with a zod input schema, so the
// agent validates every call's input as the Python agent does with JSON Schema.
//
// Run with `node --expose-gc bench.mjs`: RSS is read after a full collection.
import { createInterface } from 'node:readline';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { HarnessAgent } from '@ai-sdk/harness/agent';
import { commonTool, HarnessCapabilityUnsupportedError } from '@ai-sdk/harness';
import { z } from 'zod';

const turns = new Map();

const nextLoopTurn = () => new Promise(resolve => setImmediate(resolve));

function collect() {
  if (typeof globalThis.gc === 'function') globalThis.gc();
}

// ------------------------------------------------------------------------------------
// In-memory sandbox: files in a Map, every command exits 0 with no output.
// ------------------------------------------------------------------------------------

function memorySandbox(id) {
  const files = new Map();
  const unsupported = what => {
    throw new HarnessCapabilityUnsupportedError({
      message: `the in-memory benchmark sandbox has no ${what}`,
      harnessId: 'bench',
    });
  };
  const session = {
    id,
    description: 'in-memory benchmark sandbox',
    defaultWorkingDirectory: '/sandbox',
    ports: [],
    async getPortEndpoint() {
      unsupported('ports');
    },
    async getPortUrl() {
      unsupported('ports');
    },
    async run() {
      return { exitCode: 0, stdout: '', stderr: '' };
    },
    async spawn() {
      unsupported('processes');
    },
    async readTextFile({ path }) {
      return files.get(path) ?? null;
    },
    async readBinaryFile({ path }) {
      const text = files.get(path);
      return text == null ? null : new TextEncoder().encode(text);
    },
    async readFile({ path }) {
      const text = files.get(path);
      return text == null ? null : new Blob([text]).stream();
    },
    async writeTextFile({ path, content }) {
      files.set(path, content);
    },
    async writeBinaryFile({ path, content }) {
      files.set(path, new TextDecoder().decode(content));
    },
    async writeFiles({ files: list }) {
      for (const file of list) files.set(file.path, String(file.content));
    },
    async stop() {},
    async destroy() {
      files.clear();
    },
    restricted() {
      return session;
    },
  };
  return session;
}

const memoryProvider = {
  providerId: 'memory',
  async createSession({ sessionId } = {}) {
    return memorySandbox(`sandbox-${sessionId ?? 'anonymous'}`);
  },
};

// ------------------------------------------------------------------------------------
// The scripted harness-v1 adapter
// ------------------------------------------------------------------------------------

function scriptedAdapter(turn) {
  const state = type => ({
    type,
    specificationVersion: 'harness-v1',
    harnessId: 'bench',
    data: {},
  });
  const control = (parts, options) => ({
    async submitToolResult() {},
    done: (async () => {
      const { emit, abortSignal } = options;
      for (const part of parts) {
        if (abortSignal?.aborted) return;
        emit(part);
        await nextLoopTurn();
      }
    })(),
  });
  return {
    specificationVersion: 'harness-v1',
    harnessId: 'bench',
    supportsBuiltinToolApprovals: false,
    supportsBuiltinToolFiltering: false,
    builtinTools: {
      bash: commonTool('bash', {
        nativeName: 'Bash',
        toolUseKind: 'bash',
        description: 'Run a shell command.',
        inputSchema: z.object({ command: z.string() }),
      }),
    },
    async doStart({ sessionId }) {
      return {
        sessionId,
        isResume: false,
        async doPromptTurn(options) {
          return control(turn, options);
        },
        async doContinueTurn(options) {
          return control([], options);
        },
        async doSuspendTurn() {
          return state('continue-turn');
        },
        async doDetach() {
          return state('resume-session');
        },
        async doStop() {
          return state('resume-session');
        },
        async doDestroy() {},
        async doCompact() {
          throw new HarnessCapabilityUnsupportedError({
            message: 'no compaction',
            harnessId: 'bench',
          });
        },
      };
    },
  };
}

// ------------------------------------------------------------------------------------
// Runs
// ------------------------------------------------------------------------------------

function stopwatch() {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  return (extra = {}) => {
    const used = process.cpuUsage(cpu);
    return {
      seconds: (performance.now() - wall) / 1000,
      cpuSeconds: (used.user + used.system) / 1e6,
      ...extra,
    };
  };
}

// The adapter alone, with a null consumer that counts parts.
async function runAdapter(turn, sessions, turnCount) {
  const adapter = scriptedAdapter(turn);
  let parts = 0;
  const emit = () => {
    parts += 1;
  };
  const one = async index => {
    const sandbox = await memoryProvider.createSession({ sessionId: String(index) });
    const session = await adapter.doStart({
      sessionId: String(index),
      sandboxSession: sandbox,
      sessionWorkDir: sandbox.defaultWorkingDirectory,
    });
    for (let i = 0; i < turnCount; i++) {
      const control = await session.doPromptTurn({ prompt: 'go', emit });
      await control.done;
    }
    await session.doDestroy();
    await sandbox.destroy();
  };
  const stop = stopwatch();
  if (sessions === 1) await one(0);
  else await Promise.all(Array.from({ length: sessions }, (_, i) => one(i)));
  return stop({ parts, turns: sessions * turnCount });
}

async function drain(agent, session) {
  const result = await agent.stream({ session, prompt: 'go' });
  let parts = 0;
  for await (const _part of result.fullStream) parts += 1;
  return parts;
}

// The official agent on the adapter. One session: created before the clock starts.
// Several: creation, the turns and destruction are timed, all sessions at once, and RSS
// is read (after a full collection) when every session has finished its turns.
async function runAgent(turn, sessions, turnCount) {
  const agent = new HarnessAgent({ harness: scriptedAdapter(turn), sandbox: memoryProvider });
  if (sessions === 1) {
    const session = await agent.createSession();
    try {
      let parts = 0;
      const stop = stopwatch();
      for (let i = 0; i < turnCount; i++) parts += await drain(agent, session);
      return stop({ parts, turns: turnCount });
    } finally {
      await session.destroy();
    }
  }
  collect();
  const before = process.memoryUsage.rss();
  let finished = 0;
  let allDone;
  const everyoneDone = new Promise(resolve => {
    allDone = resolve;
  });
  let release;
  const released = new Promise(resolve => {
    release = resolve;
  });
  const one = async () => {
    const session = await agent.createSession();
    try {
      let parts = 0;
      for (let i = 0; i < turnCount; i++) parts += await drain(agent, session);
      finished += 1;
      if (finished === sessions) allDone();
      await released;
      return parts;
    } finally {
      await session.destroy();
    }
  };
  const stop = stopwatch();
  const running = Promise.all(Array.from({ length: sessions }, one));
  await Promise.race([everyoneDone, running]);
  collect();
  const peak = process.memoryUsage.rss();
  release();
  const counts = await running;
  return stop({
    parts: counts.reduce((a, b) => a + b, 0),
    turns: sessions * turnCount,
    rssGrowthBytes: Math.max(0, peak - before),
  });
}

function harnessVersion() {
  const require = createRequire(import.meta.url);
  const main = require.resolve('@ai-sdk/harness');
  let dir = main;
  for (let i = 0; i < 4; i++) {
    dir = dir.slice(0, dir.lastIndexOf('/'));
    try {
      const manifest = JSON.parse(readFileSync(`${dir}/package.json`, 'utf8'));
      if (manifest.name === '@ai-sdk/harness') return manifest.version;
    } catch {
      // not this directory
    }
  }
  return null;
}

async function handle(request) {
  if (request.op === 'versions') {
    return { node: process.version, harness: harnessVersion(), gc: typeof globalThis.gc === 'function' };
  }
  if (request.op === 'load') {
    if (!Array.isArray(request.turn)) throw new Error('load: "turn" must be a list of parts');
    turns.set(request.name, request.turn);
    return { parts: request.turn.length };
  }
  if (request.op === 'run') {
    const turn = turns.get(request.name);
    if (turn == null) throw new Error(`run: no turn loaded under ${JSON.stringify(request.name)}`);
    const sessions = request.sessions ?? 1;
    const turnCount = request.turns ?? 1;
    if (request.mode === 'adapter') return runAdapter(turn, sessions, turnCount);
    if (request.mode === 'agent') return runAgent(turn, sessions, turnCount);
    throw new Error(`run: unknown mode ${JSON.stringify(request.mode)} (agent or adapter)`);
  }
  throw new Error(`unknown op ${JSON.stringify(request.op)} (versions, load, run)`);
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (line.trim() === '') continue;
  let answer;
  try {
    answer = { ok: true, ...(await handle(JSON.parse(line))) };
  } catch (error) {
    answer = { ok: false, error: String(error?.stack ?? error) };
  }
  process.stdout.write(JSON.stringify(answer) + '\n');
}
