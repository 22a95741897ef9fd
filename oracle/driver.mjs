// Runs the official @ai-sdk/harness HarnessAgent on the language-neutral scenario files
// in scenarios/ and prints normalised JSON lines (one block per scenario).
//
//   node driver.mjs                 every scenario, to stdout
//   node driver.mjs --write         every scenario, into expected/<name>.jsonl
//   node driver.mjs --check         fail (exit 1) when expected/ is stale
//   node driver.mjs name ...        only the named scenarios, to stdout
//   node driver.mjs --serve         scenarios from stdin, NDJSON answers (see serve())
//
// The scenario format and the output lines are described in README.md ("Official
// oracle") and mirrored by tests/oracle/twin.py for the Python reference.
import { readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HarnessAgent } from '@ai-sdk/harness/agent';
import { HarnessCapabilityUnsupportedError } from '@ai-sdk/harness';
import { isStepCount, hasToolCall, jsonSchema, Output, tool } from 'ai';

const HERE = dirname(fileURLToPath(import.meta.url));
const SCENARIOS = join(HERE, 'scenarios');
const EXPECTED = join(HERE, 'expected');
const STEP_TIMEOUT_MS = 5000;

// --------------------------------------------------------------------------------------
// Normalisation (the Python twin applies the same rules)
// --------------------------------------------------------------------------------------

const ID_RE = /(?<![A-Za-z0-9])[A-Za-z0-9]{16}(?![A-Za-z0-9])/g;
const TS_RE = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)/g;
const DETAIL_MARK = 'Error message: ';

function plain(value) {
  if (value instanceof Error) {
    let message = String(value.message);
    const cut = message.indexOf(DETAIL_MARK);
    if (cut >= 0) message = message.slice(0, cut + DETAIL_MARK.length) + '<detail>';
    return { error: { name: value.name, message } };
  }
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(plain);
  if (value != null && typeof value === 'object') {
    const out = {};
    for (const key of Object.keys(value).sort()) {
      const item = value[key];
      if (item === undefined || typeof item === 'function') continue;
      out[key] = plain(item);
    }
    return out;
  }
  return value;
}

// Names of exactly 16 alphanumerics that scenario values carry; every other 16-alphanumeric
// token is a generated id (a pattern such as "camelCase word" would also match about one
// random id in a thousand, and the two sides would then disagree).
const WORDS = new Set([
  'askUserQuestions',
  'cacheWriteTokens',
  'continueGenerate',
  'providerExecuted',
  'providerMetadata',
  'responseMessages',
  'submitToolResult',
]);

// Generated ids and timestamps are replaced in string values, never in keys; ids are
// numbered by first appearance.
class Normaliser {
  constructor() {
    this.ids = new Map();
  }
  text(value) {
    return value.replace(TS_RE, '<ts>').replace(ID_RE, match => {
      if (WORDS.has(match)) return match;
      if (!this.ids.has(match)) this.ids.set(match, `<id${this.ids.size + 1}>`);
      return this.ids.get(match);
    });
  }
  walk(value) {
    if (typeof value === 'string') return this.text(value);
    if (Array.isArray(value)) return value.map(v => this.walk(v));
    if (value != null && typeof value === 'object') {
      const out = {};
      for (const key of Object.keys(value).sort()) out[key] = this.walk(value[key]);
      return out;
    }
    return value;
  }
  line(obj) {
    return JSON.stringify(this.walk(plain(obj)));
  }
}

// --------------------------------------------------------------------------------------
// In-memory sandbox (default working directory /sandbox; every command succeeds)
// --------------------------------------------------------------------------------------

function memorySandbox(log, id) {
  const files = new Map();
  const session = {
    id,
    description: 'in-memory oracle sandbox',
    defaultWorkingDirectory: '/sandbox',
    ports: [],
    async getPortEndpoint() {
      throw new Error('no ports');
    },
    async getPortUrl() {
      throw new Error('no ports');
    },
    async run({ command }) {
      log.push({ call: 'sandbox.run', command });
      return { exitCode: 0, stdout: '', stderr: '' };
    },
    async spawn() {
      throw new Error('spawn is not available in the oracle sandbox');
    },
    async readFile({ path }) {
      const text = files.get(path);
      return text == null ? null : new Blob([text]).stream();
    },
    async readBinaryFile({ path }) {
      const text = files.get(path);
      return text == null ? null : new TextEncoder().encode(text);
    },
    async readTextFile({ path }) {
      return files.get(path) ?? null;
    },
    async writeFiles({ files: list }) {
      for (const f of list) files.set(f.path, String(f.content));
    },
    async writeTextFile({ path, content }) {
      files.set(path, content);
    },
    async writeBinaryFile({ path, content }) {
      files.set(path, new TextDecoder().decode(content));
    },
    async stop() {
      log.push({ call: 'sandbox.stop' });
    },
    async destroy() {
      log.push({ call: 'sandbox.destroy' });
    },
    restricted() {
      return session;
    },
  };
  return session;
}

function memoryProvider(log) {
  return {
    providerId: 'oracle-memory',
    async createSession({ sessionId }) {
      return memorySandbox(log, `sandbox-${sessionId}`);
    },
    async resumeSession({ sessionId }) {
      return memorySandbox(log, `sandbox-${sessionId}`);
    },
  };
}

// --------------------------------------------------------------------------------------
// Scripted harness-v1 adapter
// --------------------------------------------------------------------------------------

function tick() {
  return new Promise(resolve => setImmediate(resolve));
}

function scriptedHarness(spec, turns, log) {
  const h = spec ?? {};
  const harnessId = h.harnessId ?? 'mock';
  const builtinTools = {};
  for (const [name, t] of Object.entries(h.builtinTools ?? {})) {
    builtinTools[name] = tool({
      description: t.description,
      inputSchema: jsonSchema(t.inputSchema ?? { type: 'object' }),
    });
  }
  const stateData = h.stateData ?? { cursor: 0 };
  const queue = turns.map(t => [...t]);

  function state(type, extra = {}) {
    return {
      type,
      specificationVersion: 'harness-v1',
      harnessId,
      data: stateData,
      ...extra,
    };
  }

  function startTurn(steps, options, kind) {
    const waiters = new Map();
    const submitted = new Set();
    let suspended = false;
    let wake = null;
    const waitFor = key =>
      new Promise(resolve => {
        if (submitted.has(key)) return resolve();
        waiters.set(key, resolve);
      });
    const release = key => {
      submitted.add(key);
      const resolve = waiters.get(key);
      if (resolve) {
        waiters.delete(key);
        resolve();
      }
    };
    const turn = {
      steps,
      cursor: 0,
      finished: false,
      emit: options.emit,
      abortSignal: options.abortSignal,
      suspend() {
        suspended = true;
        if (wake) wake();
      },
    };
    async function run() {
      await tick();
      while (turn.cursor < turn.steps.length && !suspended) {
        const step = turn.steps[turn.cursor];
        if (step.waitResult != null || step.waitApproval != null) {
          const key = step.waitResult ?? step.waitApproval;
          await Promise.race([
            waitFor(key),
            new Promise(resolve => {
              wake = resolve;
            }),
          ]);
          if (suspended) return;
          turn.cursor += 1;
          continue;
        }
        if (step.hang) {
          await new Promise((resolve, reject) => {
            const signal = turn.abortSignal;
            const onAbort = () => reject(new Error('aborted by caller'));
            if (signal?.aborted) onAbort();
            else signal?.addEventListener('abort', onAbort, { once: true });
            wake = resolve;
          });
          if (suspended) return;
          turn.cursor += 1;
          continue;
        }
        turn.cursor += 1;
        if (step.fail != null) throw new Error(step.fail);
        if (step.failCapability != null) {
          throw new HarnessCapabilityUnsupportedError({
            message: step.failCapability,
            harnessId,
          });
        }
        turn.emit(step.emit);
        await tick();
      }
      turn.finished = true;
    }
    const control = {
      async submitToolResult({ toolCallId, output, isError, toolResult }) {
        log.push({
          call: 'submitToolResult',
          toolCallId,
          output,
          isError,
          toolResult,
        });
        release(toolCallId);
      },
    };
    if (h.approvalResponses !== false) {
      control.submitToolApproval = async ({ approvalId, approved, reason }) => {
        log.push({ call: 'submitToolApproval', approvalId, approved, reason });
        release(approvalId);
      };
    }
    if (h.steering === true) {
      control.submitUserMessage = async text => {
        log.push({ call: 'submitUserMessage', text });
      };
    }
    turn.control = control;
    control.done = run();
    control.done.catch(() => {});
    void kind;
    return turn;
  }

  function turnOptions(options) {
    return {
      model: options.model,
      skills: options.skills,
      instructions: options.instructions,
      tools: options.tools,
      responseFormat: options.responseFormat,
    };
  }

  return {
    specificationVersion: 'harness-v1',
    harnessId,
    builtinTools,
    supportsBuiltinToolApprovals: h.supportsBuiltinToolApprovals,
    supportsBuiltinToolFiltering: h.supportsBuiltinToolFiltering,
    async doStart(options) {
      log.push({
        call: 'doStart',
        sessionId: options.sessionId,
        sessionWorkDir: options.sessionWorkDir,
        permissionMode: options.permissionMode,
        builtinToolFiltering: options.builtinToolFiltering,
        headers: options.headers,
        resumeFrom: options.resumeFrom,
        continueFrom: options.continueFrom,
      });
      if (h.startError != null) throw new Error(h.startError);
      let current = null;
      let ended = false;
      const check = name => {
        if (ended) throw new Error(`${name} after the session ended`);
      };
      return {
        sessionId: options.sessionId,
        isResume: options.resumeFrom != null || options.continueFrom != null,
        async doPromptTurn(opts) {
          check('doPromptTurn');
          log.push({
            call: 'doPromptTurn',
            prompt: opts.prompt,
            ...turnOptions(opts),
          });
          if (h.promptError != null) throw new Error(h.promptError);
          current = startTurn(queue.shift() ?? [], opts, 'prompt');
          return current.control;
        },
        async doContinueTurn(opts) {
          check('doContinueTurn');
          log.push({ call: 'doContinueTurn', ...turnOptions(opts) });
          if (current == null || current.finished || current.suspended) {
            current = startTurn(queue.shift() ?? [], opts, 'continue');
          } else {
            const resumed = startTurn(current.steps, opts, 'continue');
            resumed.cursor = current.cursor;
            current = resumed;
          }
          return current.control;
        },
        async doSuspendTurn() {
          check('doSuspendTurn');
          log.push({ call: 'doSuspendTurn' });
          if (current != null) {
            current.suspended = true;
            current.suspend();
          }
          return state('continue-turn');
        },
        async doDetach() {
          check('doDetach');
          log.push({ call: 'doDetach' });
          ended = true;
          return state('resume-session');
        },
        async doStop() {
          check('doStop');
          log.push({ call: 'doStop' });
          ended = true;
          return state('resume-session');
        },
        async doDestroy() {
          check('doDestroy');
          log.push({ call: 'doDestroy' });
          ended = true;
        },
        async doCompact(customInstructions) {
          check('doCompact');
          log.push({ call: 'doCompact', customInstructions });
          if (h.compaction === false) {
            throw new HarnessCapabilityUnsupportedError({
              message: 'no manual compaction',
              harnessId,
            });
          }
        },
      };
    },
  };
}

// --------------------------------------------------------------------------------------
// Agent settings from the scenario
// --------------------------------------------------------------------------------------

function hostTools(specs, log) {
  const out = {};
  for (const [name, t] of Object.entries(specs ?? {})) {
    const settings = {
      description: t.description,
      inputSchema: jsonSchema(t.inputSchema ?? { type: 'object' }, {
        validate: t.inputSchema == null ? undefined : validator(t.inputSchema),
      }),
    };
    if (t.contextSchema != null) {
      settings.contextSchema = jsonSchema(t.contextSchema, {
        validate: validator(t.contextSchema),
      });
    }
    if (t.execute != null) {
      const behaviour = t.execute;
      settings.execute = async (input, options) => {
        log.push({
          call: 'execute',
          tool: name,
          toolCallId: options.toolCallId,
          input,
          context: options.context,
        });
        await tick();
        if (behaviour.throws != null) throw new Error(behaviour.throws);
        if (behaviour.returnsInput) return input;
        if (behaviour.returnsContext) return options.context ?? null;
        return behaviour.returns;
      };
    }
    out[name] = tool(settings);
  }
  return out;
}

// A small JSON Schema check (type, properties, required, enum, items,
// additionalProperties: false) for the schemas the scenarios use; the failure detail
// after "Error message: " is normalised away, so only pass/fail matters.
function validator(schema) {
  return value => {
    const problem = check(schema, value, '');
    return problem == null
      ? { success: true, value }
      : { success: false, error: new Error(problem) };
  };
}

function typeOf(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number')
    return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function check(schema, value, path) {
  if (schema == null || typeof schema !== 'object') return null;
  if (schema.type != null) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    const actual = typeOf(value);
    const ok = types.some(
      t => t === actual || (t === 'number' && actual === 'integer'),
    );
    if (!ok) return `${path || 'value'} must be ${types.join('|')}`;
  }
  if (schema.enum != null && !schema.enum.some(e => e === value)) {
    return `${path || 'value'} must be one of ${JSON.stringify(schema.enum)}`;
  }
  if (typeOf(value) === 'object') {
    for (const key of schema.required ?? []) {
      if (!(key in value)) return `${path}/${key} is required`;
    }
    for (const [key, sub] of Object.entries(schema.properties ?? {})) {
      if (key in value) {
        const problem = check(sub, value[key], `${path}/${key}`);
        if (problem) return problem;
      }
    }
    if (schema.additionalProperties === false) {
      for (const key of Object.keys(value)) {
        if (!(key in (schema.properties ?? {})))
          return `${path}/${key} is not allowed`;
      }
    }
  }
  if (typeOf(value) === 'array' && schema.items != null) {
    for (let i = 0; i < value.length; i++) {
      const problem = check(schema.items, value[i], `${path}/${i}`);
      if (problem) return problem;
    }
  }
  return null;
}

function stopWhen(spec) {
  if (spec == null) return undefined;
  const list = Array.isArray(spec) ? spec : [spec];
  return list.map(s => {
    if (s.stepCountIs != null) return isStepCount(s.stepCountIs);
    if (s.hasToolCall != null) return hasToolCall(s.hasToolCall);
    throw new Error(`unknown stop condition ${JSON.stringify(s)}`);
  });
}

function outputSpec(spec) {
  if (spec == null) return undefined;
  if (spec.type === 'text') return Output.text();
  if (spec.type === 'object') {
    return Output.object({
      schema: jsonSchema(spec.schema, { validate: validator(spec.schema) }),
      name: spec.name,
      description: spec.description,
    });
  }
  if (spec.type === 'json') return Output.json();
  throw new Error(`unknown output ${JSON.stringify(spec)}`);
}

function buildAgent(scenario, harness, log) {
  const a = scenario.agent ?? {};
  const settings = {
    harness,
    sandbox: memoryProvider(log),
    tools: hostTools(a.tools, log),
  };
  for (const key of [
    'id',
    'model',
    'instructions',
    'skills',
    'headers',
    'permissionMode',
    'toolApproval',
    'activeTools',
    'inactiveTools',
    'toolsContext',
    'sandboxConfig',
  ]) {
    if (a[key] !== undefined) settings[key] = a[key];
  }
  if (a.tools == null) delete settings.tools;
  if (a.stopWhen != null) settings.stopWhen = stopWhen(a.stopWhen);
  if (a.output != null) settings.output = outputSpec(a.output);
  if (a.prepareCall != null) {
    const overrides = a.prepareCall;
    settings.prepareCall = options => {
      log.push({
        call: 'prepareCall',
        model: options.model,
        instructions: options.instructions,
        skills: options.skills,
        tools: Object.keys(options.tools ?? {}).sort(),
        toolsContext: options.toolsContext,
        prompt: options.prompt,
        messages: options.messages,
      });
      const out = { ...options };
      for (const [key, value] of Object.entries(overrides)) {
        if (key === 'keepTools') {
          out.tools = Object.fromEntries(
            Object.entries(options.tools).filter(([n]) => value.includes(n)),
          );
        } else {
          out[key] = value;
        }
      }
      return out;
    };
  }
  return new HarnessAgent(settings);
}

// --------------------------------------------------------------------------------------
// Results
// --------------------------------------------------------------------------------------

const STEP_FIELDS = [
  'content',
  'finishReason',
  'rawFinishReason',
  'usage',
  'providerMetadata',
  'warnings',
];

function stepView(step) {
  const out = {};
  for (const key of STEP_FIELDS) out[key] = step[key];
  out.response = {
    id: step.response?.id,
    modelId: step.response?.modelId,
    timestamp: step.response?.timestamp,
  };
  return out;
}

const RESULT_FIELDS = [
  'text',
  'content',
  'reasoningText',
  'toolCalls',
  'toolResults',
  'finishReason',
  'rawFinishReason',
  'usage',
  'totalUsage',
  'providerMetadata',
  'warnings',
  'responseMessages',
  'request',
  'response',
  'steps',
  'output',
];

// Every item of an async iterable, each awaited with the step timeout.
async function drain(iterable, onItem = () => {}) {
  const items = [];
  const iterator = iterable[Symbol.asyncIterator]();
  for (;;) {
    const next = await withTimeout(iterator.next());
    if (next.done) return items;
    items.push(next.value);
    onItem(next.value, items.length);
  }
}

async function settle(promiseLike) {
  try {
    return { value: await withTimeout(Promise.resolve(promiseLike)) };
  } catch (error) {
    return { error: plain(error).error ?? { name: 'Error', message: String(error) } };
  }
}

async function resultView(result) {
  const out = {};
  for (const field of RESULT_FIELDS) {
    const got = await settle((async () => result[field])());
    if (got.error) out[field] = { error: got.error };
    else if (field === 'steps') out[field] = got.value.map(stepView);
    else out[field] = got.value;
  }
  return out;
}

function withTimeout(promise) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => {
      timer = setTimeout(
        () => reject(new Error('oracle: step timed out')),
        STEP_TIMEOUT_MS,
      );
    }),
  ]);
}

// --------------------------------------------------------------------------------------
// Steps
// --------------------------------------------------------------------------------------

async function runScenario(scenario) {
  const log = [];
  const lines = [];
  const norm = new Normaliser();
  const emit = obj => lines.push(norm.line(obj));
  const flushLog = () => {
    if (log.length > 0) emit({ op: 'adapter', calls: log.splice(0) });
  };
  const harness = scriptedHarness(scenario.harness, scenario.turns ?? [], log);
  let agent = null;
  const sessions = [];
  const states = [];
  const pending = [];
  // The last approval id the consumer saw: continuations write "<from-request>" for it.
  let lastApprovalId = null;
  const seen = part => {
    if (part?.type === 'tool-approval-request') lastApprovalId = part.approvalId;
  };
  const approvals = list =>
    list?.map(a =>
      a.approvalId === '<from-request>' ? { ...a, approvalId: lastApprovalId } : a,
    );

  const sessionOf = step => sessions[step.session ?? sessions.length - 1];
  const stateOf = ref =>
    typeof ref === 'number' ? states[ref] : ref === 'last' ? states[states.length - 1] : ref;

  for (const step of scenario.steps) {
    const op = step.op;
    try {
      if (op === 'construct') {
        agent = buildAgent(scenario, harness, log);
        emit({
          op,
          ok: true,
          id: agent.id,
          tools: Object.keys(agent.tools).sort(),
        });
      } else if (op === 'createSession') {
        const options = {};
        if (step.sessionId != null) options.sessionId = step.sessionId;
        if (step.resumeFrom != null) options.resumeFrom = stateOf(step.resumeFrom);
        if (step.continueFrom != null)
          options.continueFrom = stateOf(step.continueFrom);
        if (step.toolsContext != null) options.toolsContext = step.toolsContext;
        const session = await withTimeout(agent.createSession(options));
        sessions.push(session);
        emit({
          op,
          ok: true,
          sessionId: session.sessionId,
          isResume: session.isResume,
          hasUnfinishedTurn: session.hasUnfinishedTurn?.(),
        });
      } else if (op === 'stream' || op === 'generate' || op === 'continue') {
        const session = sessionOf(step);
        const controller = new AbortController();
        const call = { session };
        if (step.prompt != null) call.prompt = step.prompt;
        if (step.messages != null) call.messages = step.messages;
        if (step.abortBefore) controller.abort();
        if (step.abortBefore || step.abortAfter != null)
          call.abortSignal = controller.signal;
        const mode = step.mode ?? (op === 'generate' ? 'generate' : 'stream');
        if (op === 'continue') {
          call.toolApprovalContinuations = approvals(step.toolApprovalContinuations);
          call.toolResultContinuations = step.toolResultContinuations;
        }
        if (mode === 'generate') {
          const result =
            op === 'continue'
              ? await withTimeout(agent.continueGenerate(call))
              : await withTimeout(agent.generate(call));
          emit({ op, mode, result: await resultView(result) });
        } else {
          const result =
            op === 'continue'
              ? await withTimeout(agent.continueStream(call))
              : await withTimeout(agent.stream(call));
          if (step.read === false) {
            pending.push(result);
            emit({ op, mode, read: false });
          } else {
            const parts = await drain(result.fullStream, (part, count) => {
              seen(part);
              if (step.abortAfter != null && count === step.abortAfter) controller.abort();
            });
            emit({ op, mode, parts });
            if (step.partialOutput === true) {
              emit({ op: 'partialOutput', values: await drain(result.partialOutputStream) });
            }
            if (step.result !== false)
              emit({ op: 'result', result: await resultView(result) });
          }
        }
      } else if (op === 'readPending') {
        const result = pending.shift();
        const parts = [];
        for await (const part of result.fullStream) {
          parts.push(part);
          seen(part);
        }
        emit({ op, parts });
        emit({ op: 'result', result: await resultView(result) });
      } else if (op === 'suspend') {
        const state = await withTimeout(sessionOf(step).suspendTurn());
        states.push(state);
        emit({ op, state });
      } else if (op === 'detach' || op === 'stop') {
        const state = await withTimeout(sessionOf(step)[op]());
        states.push(state);
        emit({ op, state });
      } else if (op === 'destroy') {
        await withTimeout(sessionOf(step).destroy());
        emit({ op, ok: true });
      } else if (op === 'compact') {
        await withTimeout(sessionOf(step).compact(step.customInstructions));
        emit({ op, ok: true });
      } else if (op === 'roundTripState') {
        states.push(JSON.parse(JSON.stringify(stateOf(step.state ?? 'last'))));
        emit({ op, ok: true });
      } else {
        throw new Error(`oracle: unknown step op ${op}`);
      }
    } catch (error) {
      const view = plain(error);
      emit({
        op,
        error: view.error ?? { name: 'Error', message: String(error) },
      });
    }
    if (step.waitLog != null) {
      // Make a race deterministic: wait until the adapter log holds the named call
      // (e.g. a host tool's submitToolResult while nobody reads the stream).
      const deadline = Date.now() + STEP_TIMEOUT_MS;
      while (!log.some(entry => entry.call === step.waitLog) && Date.now() < deadline) {
        await tick();
      }
      if (!log.some(entry => entry.call === step.waitLog)) {
        emit({ op: 'waitLog', error: { name: 'Error', message: 'oracle: step timed out' } });
      }
    }
    await tick();
    flushLog();
  }
  return lines;
}

// --------------------------------------------------------------------------------------

function scenarioNames() {
  return readdirSync(SCENARIOS)
    .filter(n => n.endsWith('.json'))
    .map(n => n.slice(0, -'.json'.length))
    .sort();
}

// --serve: one scenario per stdin line ({"id", "scenario"}), one answer per stdout line
// ({"id", "lines", "ms"}, or {"id", "error"}), in order; one process for many scenarios,
// so a generated scenario costs its own run, not a Node start-up. Ends at stdin's end.
async function serve() {
  const { createInterface } = await import('node:readline');
  const input = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const text of input) {
    if (text.trim() === '') continue;
    let id = null;
    try {
      const request = JSON.parse(text);
      id = request.id ?? null;
      const started = performance.now();
      const lines = await runScenario(request.scenario);
      const ms = performance.now() - started;
      process.stdout.write(JSON.stringify({ id, lines, ms }) + '\n');
    } catch (error) {
      process.stdout.write(JSON.stringify({ id, error: String(error?.stack ?? error) }) + '\n');
    }
  }
  process.exit(0);
}

async function main() {
  const args = process.argv.slice(2);
  if (args.includes('--serve')) return serve();
  const write = args.includes('--write');
  const checkOnly = args.includes('--check');
  const names = args.filter(a => !a.startsWith('--'));
  const selected = names.length > 0 ? names : scenarioNames();
  let stale = 0;
  if (write) mkdirSync(EXPECTED, { recursive: true });
  for (const name of selected) {
    const scenario = JSON.parse(
      readFileSync(join(SCENARIOS, `${name}.json`), 'utf8'),
    );
    const text = (await runScenario(scenario)).join('\n') + '\n';
    const target = join(EXPECTED, `${name}.jsonl`);
    if (write) {
      writeFileSync(target, text);
    } else if (checkOnly) {
      let current = null;
      try {
        current = readFileSync(target, 'utf8');
      } catch {
        current = null;
      }
      if (current !== text) {
        stale += 1;
        process.stderr.write(`stale: expected/${name}.jsonl\n`);
      }
    } else {
      process.stdout.write(`# ${name}\n${text}`);
    }
  }
  if (checkOnly && names.length === 0) {
    for (const file of readdirSync(EXPECTED)) {
      if (!selected.includes(file.replace(/\.jsonl$/, ''))) {
        stale += 1;
        process.stderr.write(`orphan: expected/${file} has no scenario\n`);
      }
    }
  }
  if (checkOnly) {
    if (stale > 0) {
      process.stderr.write(
        `${stale} committed official output(s) are stale; run: node oracle/driver.mjs --write\n`,
      );
      process.exit(1);
    }
    process.stdout.write(`oracle: ${selected.length} official outputs are current\n`);
  }
  // Unresolved adapter promises must not keep the process alive.
  process.exit(0);
}

await main();
