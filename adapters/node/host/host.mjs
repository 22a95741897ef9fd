#!/usr/bin/env node
// harness-testkit's adapter host: one harness-v1 adapter (a TypeScript/JavaScript npm
// package or a local folder) behind JSON-RPC 2.0 on stdio, one JSON object per line.
//
// The protocol is specified in harness_testkit.spec (host protocol models, JSON Schema
// spec/schemas/host-protocol.schema.json, requirement area HOST). In short:
//   kit -> host requests: initialize, describe, createHarness, doStart, doPromptTurn,
//     doContinueTurn, submitToolResult, submitToolApproval, submitUserMessage, done,
//     doCompact, doSuspendTurn, doDetach, doStop, doDestroy, shutdown
//   kit -> host notifications: $/cancelRequest {id} (aborts that request's AbortSignal;
//     for doStart/doPromptTurn/doContinueTurn the signal lives as long as the session or turn)
//   kit -> host notifications: checkpoint/pin, checkpoint/release {turn, seq} (the event
//     checkpoint of a finish-step part whose emit said checkpoint: true; STOP-008)
//   host -> kit notifications: emit {turn, part, seq}, log {level, message}
//   host -> kit requests: sandbox/<method> {session, ...} and process/kill {process}
//   kit -> host notifications for spawned processes: process/output, process/exit
// stdout carries protocol frames only: everything the adapter prints goes to stderr.

import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { pathToFileURL } from 'node:url';

const PROTOCOL_VERSION = '1.1';
const HOST_VERSION = JSON.parse(
  fs.readFileSync(new URL('./package.json', import.meta.url), 'utf8'),
).version;

// JSON-RPC error codes: the standard ones, then the host's own (-32000..-32099).
// The hidden property upstream's sandbox channel puts on each event it reads (a global
// symbol, so the channel's copy in the adapter's bundle and this host agree on it).
const EVENT_CHECKPOINT = Symbol.for('vercel.ai.harness.sandboxChannelEventCheckpoint');

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const ADAPTER_ERROR = -32000;
const REQUEST_CANCELLED = -32800;

// -- stdout belongs to the protocol ----------------------------------------------------
const writeFrameRaw = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, encoding, callback) =>
  process.stderr.write(chunk, encoding, callback);
for (const name of ['log', 'info', 'debug', 'trace']) {
  console[name] = (...args) => console.error(...args);
}

function toWire(value) {
  // Errors, bytes and other non-JSON values inside parts and results become JSON.
  return JSON.stringify(value, (_key, item) => {
    if (item instanceof Error) return serializeError(item);
    if (item instanceof Uint8Array) return { type: 'bytes', base64: Buffer.from(item).toString('base64') };
    if (typeof item === 'bigint') return item.toString();
    if (item instanceof URL) return item.href;
    return item;
  });
}

function serializeError(error) {
  if (!(error instanceof Error)) {
    return { name: 'Error', message: typeof error === 'string' ? error : toWire(error) ?? String(error) };
  }
  const out = { name: error.name || 'Error', message: error.message ?? String(error) };
  for (const key of ['harnessId', 'code', 'statusCode', 'reason']) {
    if (error[key] !== undefined) out[key] = error[key];
  }
  if (error.cause !== undefined) out.cause = serializeError(error.cause);
  return out;
}

function send(frame) {
  writeFrameRaw(toWire({ jsonrpc: '2.0', ...frame }) + '\n');
}

function log(level, message) {
  send({ method: 'log', params: { level, message } });
}

process.on('unhandledRejection', (reason) => {
  // An adapter's stray rejection must not take every other session of the run down.
  log('error', `unhandled rejection in the adapter: ${serializeError(reason).message}`);
});

// -- calls from the host to the kit --------------------------------------------------------
let nextOutgoing = 0;
const outgoing = new Map();

function callKit(method, params, signal) {
  const id = `h${++nextOutgoing}`;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason ?? abortError());
      return;
    }
    const onAbort = () => {
      outgoing.delete(id);
      send({ method: '$/cancelRequest', params: { id } });
      reject(signal.reason ?? abortError());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    outgoing.set(id, {
      resolve: (value) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(value);
      },
      reject: (error) => {
        signal?.removeEventListener('abort', onAbort);
        reject(error);
      },
    });
    send({ id, method, params });
  });
}

function abortError() {
  const error = new Error('This operation was aborted');
  error.name = 'AbortError';
  return error;
}

function errorFromWire(wire) {
  const data = wire.data ?? {};
  const error = new Error(wire.message);
  error.name = data.name ?? 'Error';
  return error;
}

// -- the sandbox session the adapter sees: every call goes to the kit's sandbox ----------
const processes = new Map();

function sandboxSession(sessionHandle, info) {
  const call = (method, params, signal) =>
    callKit(`sandbox/${method}`, { session: sessionHandle, ...params }, signal);
  const session = {
    description: info.description ?? '',
    async readBinaryFile({ path: file, abortSignal }) {
      const { base64 } = await call('readBinaryFile', { path: file }, abortSignal);
      return base64 == null ? null : new Uint8Array(Buffer.from(base64, 'base64'));
    },
    async readTextFile({ path: file, startLine, endLine, encoding, abortSignal }) {
      const { content } = await call(
        'readTextFile',
        { path: file, startLine, endLine, encoding },
        abortSignal,
      );
      return content ?? null;
    },
    async readFile(options) {
      const bytes = await session.readBinaryFile(options);
      if (bytes == null) return null;
      return new ReadableStream({
        start(controller) {
          controller.enqueue(bytes);
          controller.close();
        },
      });
    },
    async writeBinaryFile({ path: file, content, abortSignal }) {
      await call(
        'writeBinaryFile',
        { path: file, base64: Buffer.from(content).toString('base64') },
        abortSignal,
      );
    },
    async writeTextFile({ path: file, content, encoding, abortSignal }) {
      await call('writeTextFile', { path: file, content, encoding }, abortSignal);
    },
    async writeFile({ path: file, content, abortSignal }) {
      const chunks = [];
      for await (const chunk of content) chunks.push(Buffer.from(chunk));
      await session.writeBinaryFile({ path: file, content: Buffer.concat(chunks), abortSignal });
    },
    async run({ command, workingDirectory, env, abortSignal }) {
      return call('run', { command, workingDirectory, env }, abortSignal);
    },
    async spawn({ command, workingDirectory, env, abortSignal }) {
      const { process: handle, pid } = await call(
        'spawn',
        { command, workingDirectory, env },
        abortSignal,
      );
      return spawnedProcess(handle, pid, abortSignal);
    },
  };
  if (info.id !== undefined) session.id = info.id;
  if (info.defaultWorkingDirectory !== undefined) {
    session.defaultWorkingDirectory = info.defaultWorkingDirectory;
  }
  if (Array.isArray(info.ports)) return networkSession(session, info.ports, info.endpoints ?? {});
  return session;
}

// A network sandbox session for bridge adapters (their runtime listens on a port in the
// sandbox). The kit exposes loopback ports only: every endpoint is 127.0.0.1, on the port
// itself or on the kit's relay for it (`endpoints`, port -> host:port), and the kit owns
// the sandbox's lifecycle, so stop and destroy change nothing.
function networkSession(bare, ports, endpoints) {
  const endpoint = ({ port, protocol = 'http' }) => {
    if (!ports.includes(port)) {
      const error = new Error(
        `Port ${port} is not exposed on this sandbox. Exposed ports: [${ports.join(', ')}]`,
      );
      error.name = 'AI_HarnessCapabilityUnsupportedError';
      throw error;
    }
    return { url: `${protocol}://${endpoints[String(port)] ?? `127.0.0.1:${port}`}` };
  };
  return {
    ...bare,
    ports: [...ports],
    getPortEndpoint: async (options) => endpoint(options),
    getPortUrl: async (options) => endpoint(options).url,
    restricted: () => bare,
    stop: async () => {},
    destroy: async () => {},
  };
}

function spawnedProcess(handle, pid, abortSignal) {
  const controllers = {};
  const stream = (name) =>
    new ReadableStream({
      start(controller) {
        controllers[name] = controller;
      },
    });
  let settle;
  const exited = new Promise((resolve) => {
    settle = resolve;
  });
  const entry = {
    output(name, bytes) {
      controllers[name]?.enqueue(bytes);
    },
    exit(exitCode) {
      for (const controller of Object.values(controllers)) {
        try {
          controller.close();
        } catch {
          // already closed by the reader
        }
      }
      processes.delete(handle);
      settle({ exitCode });
    },
  };
  processes.set(handle, entry);
  const kill = async () => {
    if (processes.has(handle)) await callKit('process/kill', { process: handle });
  };
  abortSignal?.addEventListener('abort', () => void kill().catch(() => {}), { once: true });
  return {
    pid,
    stdout: stream('stdout'),
    stderr: stream('stderr'),
    wait: () => exited,
    kill,
  };
}

// -- loading the adapter -------------------------------------------------------------------
const CONDITIONS = ['node', 'import', 'default'];

function exportsEntry(exportsField) {
  if (typeof exportsField === 'string') return exportsField;
  if (Array.isArray(exportsField)) {
    for (const item of exportsField) {
      const found = exportsEntry(item);
      if (found) return found;
    }
    return null;
  }
  if (exportsField && typeof exportsField === 'object') {
    if ('.' in exportsField) return exportsEntry(exportsField['.']);
    for (const [condition, target] of Object.entries(exportsField)) {
      if (CONDITIONS.includes(condition)) {
        const found = exportsEntry(target);
        if (found) return found;
      }
    }
  }
  return null;
}

function packageEntry(directory) {
  const manifestPath = path.join(directory, 'package.json');
  if (!fs.existsSync(manifestPath)) {
    throw invalidParams(`${directory} has no package.json: point at a package folder or a .js/.mjs file`);
  }
  const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
  const entry =
    exportsEntry(manifest.exports) ?? manifest.module ?? manifest.main ?? 'index.js';
  return { file: path.resolve(directory, entry), manifest };
}

async function loadAdapter({ module: moduleRef, resolveFrom, export: exportName }) {
  let location;
  if (path.isAbsolute(moduleRef)) {
    location = moduleRef;
  } else {
    if (!resolveFrom) throw invalidParams(`'${moduleRef}' is not an absolute path and no resolveFrom folder was given`);
    location = path.join(resolveFrom, 'node_modules', moduleRef);
  }
  if (!fs.existsSync(location)) throw invalidParams(`adapter module ${location} does not exist`);
  let file = location;
  let manifest = null;
  if (fs.statSync(location).isDirectory()) {
    ({ file, manifest } = packageEntry(location));
  }
  const loaded = await import(pathToFileURL(file).href);
  const name = exportName || 'default';
  if (!(name in loaded)) {
    throw invalidParams(
      `${file} has no export '${name}'; it exports: ${Object.keys(loaded).join(', ') || 'nothing'}`,
    );
  }
  const requireFromAdapter = createRequire(file);
  return {
    value: loaded[name],
    exportName: name,
    package: manifest ? { name: manifest.name, version: manifest.version } : null,
    requireFromAdapter,
  };
}

function invalidParams(message) {
  const error = new Error(message);
  error.rpcCode = INVALID_PARAMS;
  return error;
}

function deepMerge(base, override) {
  if (override === undefined) return base;
  if (!isPlainObject(base) || !isPlainObject(override)) return override;
  const out = { ...base };
  for (const [key, value] of Object.entries(override)) out[key] = deepMerge(base[key], value);
  return out;
}

function isPlainObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

// -- state ---------------------------------------------------------------------------------
const state = {
  adapter: null,
  baseSettings: {},
  faults: new Set(),
  harnesses: new Map(),
  sessions: new Map(),
  turns: new Map(),
  next: 0,
};
const KNOWN_FAULTS = new Set(['drop-provider-executed', 'approve-denials', 'drop-early-parts']);
const requestControllers = new Map();

function handle(prefix) {
  state.next += 1;
  return `${prefix}${state.next}`;
}

function need(map, key, what) {
  const value = map.get(key);
  if (value === undefined) throw invalidParams(`unknown ${what} '${key}'`);
  return value;
}

function makeHarness(settings) {
  const { value } = state.adapter;
  if (typeof value === 'function') return value(deepMerge(state.baseSettings, settings));
  if (settings && Object.keys(settings).length > 0) {
    throw invalidParams(
      `export '${state.adapter.exportName}' is a harness object, not a factory: it takes no settings`,
    );
  }
  return value;
}

async function jsonSchemaOf(schema) {
  if (schema == null) return null;
  try {
    const { asSchema } = state.adapter.requireFromAdapter('@ai-sdk/provider-utils');
    return await asSchema(schema).jsonSchema;
  } catch (error) {
    if (schema.jsonSchema !== undefined) return await schema.jsonSchema;
    log('warn', `cannot convert a schema to JSON Schema: ${serializeError(error).message}`);
    return null;
  }
}

function emitterFor(turnId) {
  // Parts are numbered where the adapter emits them, so the kit sees a part lost between
  // here and stdout as a gap (HOST-013).
  let seq = 0;
  return (part) => {
    seq += 1;
    const entry = state.turns.get(turnId);
    if (entry?.settled) {
      log('warn', `the adapter emitted a '${part?.type}' part after turn ${turnId} ended`);
    }
    // Planted defect (the kit's own tests): a host that wires its consumer of the turn's
    // parts only once doPromptTurn has returned loses what the adapter emitted before.
    if (state.faults.has('drop-early-parts') && entry?.control === null) return;
    let forwarded = part;
    if (state.faults.has('drop-provider-executed') && part?.type === 'tool-call') {
      const { providerExecuted: _dropped, ...rest } = part;
      forwarded = rest;
    }
    const params = { turn: turnId, part: forwarded, seq };
    // Upstream's agent pins the event checkpoint of the finish-step a stop condition
    // ended a slice at, so the adapter's suspension cursor points there (STOP-008). The
    // checkpoint is a hidden property of the part: it stays here, and the kit pins it by
    // the part's number.
    const checkpoint = part?.type === 'finish-step' ? part[EVENT_CHECKPOINT] : undefined;
    if (entry !== undefined && typeof checkpoint?.pin === 'function') {
      entry.checkpoints.set(seq, checkpoint);
      params.checkpoint = true;
    }
    send({ method: 'emit', params });
  };
}

function checkpointOf(params) {
  const entry = state.turns.get(params?.turn);
  const checkpoint = entry?.checkpoints.get(params?.seq);
  if (checkpoint === undefined) {
    log('warn', `no checkpoint of part ${params?.seq} of turn ${params?.turn} to pin or release`);
  }
  return { entry, checkpoint };
}

function turnSettings(params) {
  const settings = { tools: params.tools ?? [], skills: params.skills ?? [] };
  for (const key of ['model', 'instructions', 'responseFormat', 'headers']) {
    if (params[key] !== undefined) settings[key] = params[key];
  }
  return settings;
}

async function startTurn(params, context, method) {
  const session = need(state.sessions, params.session, 'session');
  if (typeof params.turn !== 'string' || state.turns.has(params.turn)) {
    throw invalidParams(`turn must be a new turn id (got ${JSON.stringify(params.turn)})`);
  }
  context.keep = true;
  const options = { ...turnSettings(params), abortSignal: context.signal, emit: emitterFor(params.turn) };
  if (method === 'doPromptTurn') options.prompt = params.prompt;
  state.turns.set(params.turn, {
    control: null,
    requestId: context.id,
    settled: false,
    checkpoints: new Map(),
    pins: new Map(),
  });
  let control;
  try {
    control = await session.session[method](options);
  } catch (error) {
    state.turns.delete(params.turn);
    context.keep = false;
    throw error;
  }
  state.turns.get(params.turn).control = control;
  return {
    controls: {
      submitToolApproval: typeof control.submitToolApproval === 'function',
      submitUserMessage: typeof control.submitUserMessage === 'function',
    },
  };
}

function turnControl(params) {
  const entry = need(state.turns, params.turn, 'turn');
  if (entry.control === null) throw invalidParams(`turn '${params.turn}' has not started yet`);
  return entry;
}

async function endSession(params, method) {
  const entry = need(state.sessions, params.session, 'session');
  const result = await entry.session[method]();
  state.sessions.delete(params.session);
  releaseRequest(entry.requestId);
  return result ?? null;
}

function releaseRequest(id) {
  requestControllers.delete(String(id));
}

const methods = {
  async initialize(params) {
    if (typeof params.protocolVersion !== 'string' || params.protocolVersion.split('.')[0] !== PROTOCOL_VERSION.split('.')[0]) {
      throw invalidParams(
        `protocolVersion ${JSON.stringify(params.protocolVersion)} is not supported; this host speaks ${PROTOCOL_VERSION}`,
      );
    }
    if (state.adapter !== null) throw invalidParams('initialize was already called');
    for (const fault of params.faults ?? []) {
      if (!KNOWN_FAULTS.has(fault)) throw invalidParams(`unknown fault '${fault}'`);
      state.faults.add(fault);
    }
    state.adapter = await loadAdapter(params.adapter ?? {});
    state.baseSettings = params.adapter.settings ?? {};
    return {
      protocolVersion: PROTOCOL_VERSION,
      host: { version: HOST_VERSION, node: process.version },
      adapter: { package: state.adapter.package, export: state.adapter.exportName },
    };
  },

  async describe(params) {
    const harness = makeHarness(params.settings ?? {});
    const builtinTools = {};
    for (const [key, tool] of Object.entries(harness.builtinTools ?? {})) {
      const described = { inputSchema: await jsonSchemaOf(tool.inputSchema) };
      for (const field of ['description', 'nativeName', 'commonName', 'toolUseKind']) {
        if (tool[field] !== undefined) described[field] = tool[field];
      }
      builtinTools[key] = described;
    }
    return {
      specificationVersion: harness.specificationVersion,
      harnessId: harness.harnessId,
      supportsBuiltinToolApprovals: harness.supportsBuiltinToolApprovals ?? false,
      supportsBuiltinToolFiltering: harness.supportsBuiltinToolFiltering ?? false,
      builtinTools,
      lifecycleStateSchema: harness.lifecycleStateSchema
        ? await jsonSchemaOf(harness.lifecycleStateSchema)
        : null,
      hasBootstrap: typeof harness.getBootstrap === 'function',
    };
  },

  async getBootstrap(params, context) {
    const harness = need(state.harnesses, params.harness, 'harness');
    if (typeof harness.getBootstrap !== 'function') return null;
    return harness.getBootstrap({ abortSignal: context.signal });
  },

  async createHarness(params) {
    const id = handle('h');
    state.harnesses.set(id, makeHarness(params.settings ?? {}));
    return { harness: id };
  },

  async doStart(params, context) {
    const harness = need(state.harnesses, params.harness, 'harness');
    const id = params.session;
    if (typeof id !== 'string' || id === '' || state.sessions.has(id)) {
      throw invalidParams(`session must be a new session id (got ${JSON.stringify(id)})`);
    }
    context.keep = true;
    const options = {
      sessionId: params.sessionId,
      sessionWorkDir: params.sessionWorkDir,
      sandboxSession: sandboxSession(id, params.sandbox ?? {}),
      abortSignal: context.signal,
    };
    for (const key of ['resumeFrom', 'continueFrom', 'permissionMode', 'builtinToolFiltering', 'headers']) {
      if (params[key] !== undefined) options[key] = params[key];
    }
    let session;
    try {
      session = await harness.doStart(options);
    } catch (error) {
      context.keep = false;
      throw error;
    }
    state.sessions.set(id, { session, requestId: context.id });
    const result = { session: id, sessionId: session.sessionId, isResume: Boolean(session.isResume) };
    if (typeof session.modelId === 'string') result.modelId = session.modelId;
    return result;
  },

  doPromptTurn: (params, context) => startTurn(params, context, 'doPromptTurn'),
  doContinueTurn: (params, context) => startTurn(params, context, 'doContinueTurn'),

  async submitToolResult(params) {
    const { control } = turnControl(params);
    const input = { toolCallId: params.toolCallId, output: params.output };
    if (params.isError !== undefined) input.isError = params.isError;
    if (params.toolResult !== undefined) input.toolResult = params.toolResult;
    await control.submitToolResult(input);
    return null;
  },

  async submitToolApproval(params) {
    const { control } = turnControl(params);
    if (typeof control.submitToolApproval !== 'function') {
      throw Object.assign(new Error('This turn takes no tool approvals.'), {
        name: 'AI_HarnessCapabilityUnsupportedError',
      });
    }
    const input = { approvalId: params.approvalId, approved: params.approved };
    if (state.faults.has('approve-denials')) input.approved = true;
    if (params.reason !== undefined) input.reason = params.reason;
    await control.submitToolApproval(input);
    return null;
  },

  async submitUserMessage(params) {
    const { control } = turnControl(params);
    if (typeof control.submitUserMessage !== 'function') {
      throw Object.assign(new Error('This turn takes no user messages.'), {
        name: 'AI_HarnessCapabilityUnsupportedError',
      });
    }
    await control.submitUserMessage(params.text);
    return null;
  },

  async done(params) {
    const entry = turnControl(params);
    try {
      await entry.control.done;
    } finally {
      entry.settled = true;
      releaseRequest(entry.requestId);
    }
    return null;
  },

  async doCompact(params) {
    const { session } = need(state.sessions, params.session, 'session');
    await session.doCompact(params.customInstructions);
    return null;
  },

  async doSuspendTurn(params) {
    const { session } = need(state.sessions, params.session, 'session');
    return session.doSuspendTurn();
  },

  doDetach: (params) => endSession(params, 'doDetach'),
  doStop: (params) => endSession(params, 'doStop'),
  doDestroy: async (params) => {
    await endSession(params, 'doDestroy');
    return null;
  },

  async shutdown() {
    setImmediate(() => process.exit(0));
    return null;
  },
};

// -- frames from the kit -------------------------------------------------------------------
function onNotification(method, params) {
  if (method === '$/cancelRequest') {
    const controller = requestControllers.get(String(params?.id));
    controller?.abort(abortError());
    return;
  }
  if (method === 'process/output') {
    processes.get(params.process)?.output(params.stream, new Uint8Array(Buffer.from(params.base64, 'base64')));
    return;
  }
  if (method === 'process/exit') {
    processes.get(params.process)?.exit(params.exitCode);
    return;
  }
  if (method === 'checkpoint/pin') {
    const { entry, checkpoint } = checkpointOf(params);
    if (checkpoint !== undefined) entry.pins.set(params.seq, checkpoint.pin());
    return;
  }
  if (method === 'checkpoint/release') {
    const { entry, checkpoint } = checkpointOf(params);
    if (checkpoint !== undefined) {
      entry.pins.get(params.seq)?.();
      entry.pins.delete(params.seq);
    }
    return;
  }
  log('warn', `ignored unknown notification '${method}'`);
}

async function onRequest(id, method, params) {
  const handler = Object.hasOwn(methods, method) ? methods[method] : undefined;
  if (handler === undefined) {
    send({ id, error: { code: METHOD_NOT_FOUND, message: `unknown method '${method}'` } });
    return;
  }
  if (method !== 'initialize' && state.adapter === null) {
    send({ id, error: { code: INVALID_REQUEST, message: `call initialize before '${method}'` } });
    return;
  }
  const controller = new AbortController();
  const context = { id, signal: controller.signal, keep: false };
  requestControllers.set(String(id), controller);
  try {
    const result = await handler(params ?? {}, context);
    send({ id, result: result === undefined ? null : result });
  } catch (error) {
    const cancelled = controller.signal.aborted && error?.name === 'AbortError';
    send({
      id,
      error: {
        code: error?.rpcCode ?? (cancelled ? REQUEST_CANCELLED : ADAPTER_ERROR),
        message: error?.message ?? String(error),
        data: serializeError(error),
      },
    });
  } finally {
    if (!context.keep) releaseRequest(id);
  }
}

function onLine(line) {
  if (line.trim() === '') return;
  let frame;
  try {
    frame = JSON.parse(line);
  } catch (error) {
    send({ id: null, error: { code: PARSE_ERROR, message: `not JSON: ${error.message}` } });
    return;
  }
  if (frame === null || typeof frame !== 'object' || frame.jsonrpc !== '2.0') {
    send({ id: frame?.id ?? null, error: { code: INVALID_REQUEST, message: 'not a JSON-RPC 2.0 frame' } });
    return;
  }
  if (typeof frame.method === 'string') {
    if (frame.id === undefined) onNotification(frame.method, frame.params);
    else void onRequest(frame.id, frame.method, frame.params);
    return;
  }
  const pending = outgoing.get(frame.id);
  if (pending === undefined) {
    log('warn', `a response to unknown request ${JSON.stringify(frame.id)} was ignored`);
    return;
  }
  outgoing.delete(frame.id);
  if (frame.error !== undefined) pending.reject(errorFromWire(frame.error));
  else pending.resolve(frame.result);
}

const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
input.on('line', onLine);
// The kit owns this process: when it closes stdin (or dies), nothing here may live on.
input.on('close', () => process.exit(0));
