// A small harness-v1 adapter in plain JavaScript (ESM), the shape a TypeScript adapter
// has once it is built: the kit checks it with
//   harness-testkit check ./adapters/node/example#createExampleHarness \
//     --settings adapters/node/example/settings.json
// Its runtime is a minimal agent loop of its own: it asks an Anthropic Messages endpoint
// (the kit's scripted model when the settings say {{endpoint.baseUrl}}), runs its
// built-ins (read, write, bash) through the sandbox session it is given, and hands host
// tools to the host with a tool-call part and submitToolResult. Sessions keep their
// conversation in lifecycle state data, so they resume in another process.

const HARNESS_ID = 'example';

const BUILTINS = {
  read: {
    nativeName: 'Read',
    commonName: 'read',
    toolUseKind: 'readonly',
    description: 'Read a text file of the workspace.',
    schema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] },
  },
  write: {
    nativeName: 'Write',
    commonName: 'write',
    toolUseKind: 'edit',
    description: 'Write a text file of the workspace.',
    schema: {
      type: 'object',
      properties: { file_path: { type: 'string' }, content: { type: 'string' } },
      required: ['file_path', 'content'],
    },
  },
  bash: {
    nativeName: 'Bash',
    commonName: 'bash',
    toolUseKind: 'bash',
    description: 'Run a shell command in the workspace.',
    schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
  },
};

function capabilityError(message) {
  const error = new Error(message);
  error.name = 'AI_HarnessCapabilityUnsupportedError';
  error.harnessId = HARNESS_ID;
  return error;
}

function harnessError(message) {
  const error = new Error(message);
  error.name = 'AI_HarnessError';
  return error;
}

function needsApproval(kind, mode) {
  if (mode === 'allow-all' || mode === undefined) return false;
  if (mode === 'allow-edits') return kind === 'bash';
  return kind === 'edit' || kind === 'bash';
}

function included(name, filtering) {
  if (!filtering) return true;
  const listed = filtering.toolNames.includes(name);
  return filtering.mode === 'allow' ? listed : !listed;
}

function resolvePath(workDir, file) {
  return file.startsWith('/') ? file : `${workDir.replace(/\/$/, '')}/${file}`;
}

function usage(raw) {
  const input = raw?.input_tokens ?? 0;
  const output = raw?.output_tokens ?? 0;
  return {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: output, text: output, reasoning: 0 },
  };
}

function checkState(state, type) {
  if (state?.type !== type || state.harnessId !== HARNESS_ID || state.specificationVersion !== 'harness-v1') {
    throw harnessError(`Harness '${HARNESS_ID}' cannot start from this state: expected a ${type} state of '${HARNESS_ID}'.`);
  }
  if (!Array.isArray(state.data?.messages)) {
    throw harnessError(`Harness '${HARNESS_ID}' cannot start from this state: its data has no messages.`);
  }
}

class Turn {
  constructor(session, options) {
    this.session = session;
    this.options = { ...options, emit: (part) => this.forward(part) };
    this.target = options.emit;
    this.buffer = [];
    this.results = new Map();
    this.waiters = new Map();
    this.totals = { input: 0, output: 0 };
    this.done = this.run().finally(() => {
      session.turn = null;
    });
  }

  // Parts go to the current consumer; while the turn is suspended they are kept, and a
  // continued turn gets them first (an attach: nothing lost, nothing twice).
  forward(part) {
    if (this.target) this.target(part);
    else this.buffer.push(part);
  }

  detach() {
    this.target = null;
    this.endSlice?.();
  }

  attach(emit) {
    this.target = emit;
    for (const part of this.buffer.splice(0)) emit(part);
  }

  // A slice's done: the turn's end, or (cleanly) the suspension of this slice.
  slice() {
    const suspended = new Promise((resolve) => {
      this.endSlice = resolve;
    });
    return Promise.race([this.done, suspended]);
  }

  wait(key) {
    if (this.results.has(key)) return Promise.resolve(this.results.get(key));
    return new Promise((resolve, reject) => {
      this.waiters.set(key, resolve);
      this.options.abortSignal?.addEventListener('abort', () => reject(this.options.abortSignal.reason), { once: true });
    });
  }

  answer(key, value) {
    this.results.set(key, value);
    this.waiters.get(key)?.(value);
  }

  async ask(messages) {
    const { settings } = this.session.harness;
    const tools = [
      ...Object.entries(BUILTINS)
        .filter(([key]) => included(key, this.session.builtinToolFiltering))
        .map(([, tool]) => ({ name: tool.nativeName, description: tool.description, input_schema: tool.schema })),
      ...this.options.tools.map((tool) => ({
        name: tool.name,
        description: tool.description ?? '',
        input_schema: tool.inputSchema ?? { type: 'object' },
      })),
    ];
    const response = await fetch(`${settings.baseUrl.replace(/\/$/, '')}/v1/messages`, {
      method: 'POST',
      signal: this.options.abortSignal,
      headers: {
        'content-type': 'application/json',
        'x-api-key': settings.apiKey ?? '',
        'anthropic-version': '2023-06-01',
      },
      body: JSON.stringify({
        model: (this.options.model ?? settings.model ?? 'example-model').replace(/^anthropic\//, ''),
        max_tokens: 1024,
        ...(this.options.instructions ? { system: this.options.instructions } : {}),
        messages,
        tools,
      }),
    });
    if (!response.ok) throw new Error(`model request failed with status ${response.status}: ${await response.text()}`);
    return response.json();
  }

  async run() {
    const { emit } = this.options;
    const session = this.session;
    const messages = session.messages;
    if (this.options.prompt !== undefined) {
      const text = typeof this.options.prompt === 'string' ? this.options.prompt : JSON.stringify(this.options.prompt);
      messages.push({ role: 'user', content: text });
    }
    emit({ type: 'stream-start', modelId: this.options.model ?? session.harness.settings.model ?? 'example-model' });
    let step = 0;
    for (;;) {
      const reply = await this.ask(messages);
      this.totals.input += reply.usage?.input_tokens ?? 0;
      this.totals.output += reply.usage?.output_tokens ?? 0;
      messages.push({ role: 'assistant', content: reply.content });
      const calls = [];
      for (const [index, block] of reply.content.entries()) {
        if (block.type === 'text') {
          const id = `text-${step}-${index}`;
          emit({ type: 'text-start', id });
          emit({ type: 'text-delta', id, delta: block.text });
          emit({ type: 'text-end', id });
        } else if (block.type === 'tool_use') {
          calls.push(block);
        }
      }
      // Calls resolve one at a time, in order: each is announced, asked for approval when
      // the permission mode gates it, run, and answered before the next is announced
      // (a consumer that pauses at an approval sees the next call after it continues).
      const results = [];
      for (const call of calls) {
        const [key, builtin] = Object.entries(BUILTINS).find(([, tool]) => tool.nativeName === call.name) ?? [];
        let output;
        let isError = false;
        if (builtin) {
          emit({
            type: 'tool-call',
            toolCallId: call.id,
            toolName: key,
            input: JSON.stringify(call.input),
            providerExecuted: true,
            ...(builtin.nativeName !== key ? { nativeName: builtin.nativeName } : {}),
          });
          ({ output, isError } = await this.builtin(key, builtin, call));
          emit({ type: 'tool-result', toolCallId: call.id, toolName: key, result: output, ...(isError ? { isError } : {}) });
        } else {
          emit({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: JSON.stringify(call.input) });
          const submitted = await this.wait(`result:${call.id}`);
          output = submitted.output;
          isError = Boolean(submitted.isError);
          emit({ type: 'tool-result', toolCallId: call.id, toolName: call.name, result: output, ...(isError ? { isError } : {}) });
        }
        results.push({
          type: 'tool_result',
          tool_use_id: call.id,
          content: typeof output === 'string' ? output : JSON.stringify(output),
          ...(isError ? { is_error: true } : {}),
        });
      }
      const finishReason = calls.length ? 'tool-calls' : reply.stop_reason === 'max_tokens' ? 'length' : 'stop';
      emit({ type: 'finish-step', finishReason: { unified: finishReason, raw: reply.stop_reason ?? 'end_turn' }, usage: usage(reply.usage) });
      step += 1;
      if (!calls.length) break;
      messages.push({ role: 'user', content: results });
    }
    emit({
      type: 'finish',
      finishReason: { unified: 'stop' },
      totalUsage: usage({ input_tokens: this.totals.input, output_tokens: this.totals.output }),
    });
  }

  async builtin(key, builtin, call) {
    const session = this.session;
    if (!included(key, session.builtinToolFiltering)) {
      return { output: `Tool '${key}' is not available: it is disabled by the built-in tool filter.`, isError: true };
    }
    if (needsApproval(builtin.toolUseKind, session.permissionMode)) {
      this.options.emit({ type: 'tool-approval-request', approvalId: call.id, toolCallId: call.id });
      const decision = await this.wait(`approval:${call.id}`);
      if (!decision.approved) {
        return { output: decision.reason ?? `The user denied the call to '${key}'.`, isError: true };
      }
    }
    const sandbox = session.sandbox;
    const signal = this.options.abortSignal;
    try {
      if (key === 'read') {
        const text = await sandbox.readTextFile({ path: resolvePath(session.workDir, call.input.file_path), abortSignal: signal });
        return text == null ? { output: `File not found: ${call.input.file_path}`, isError: true } : { output: text };
      }
      if (key === 'write') {
        await sandbox.writeTextFile({ path: resolvePath(session.workDir, call.input.file_path), content: call.input.content, abortSignal: signal });
        return { output: `Wrote ${call.input.file_path}` };
      }
      const result = await sandbox.run({ command: call.input.command, workingDirectory: session.workDir, abortSignal: signal });
      return { output: `${result.stdout}${result.stderr}(exit ${result.exitCode})`, isError: result.exitCode !== 0 };
    } catch (error) {
      if (signal?.aborted) throw error;
      return { output: String(error?.message ?? error), isError: true };
    }
  }
}

class ExampleSession {
  constructor(harness, options, messages) {
    this.harness = harness;
    this.sessionId = options.sessionId;
    this.isResume = Boolean(options.resumeFrom || options.continueFrom);
    this.sandbox = options.sandboxSession;
    this.workDir = options.sessionWorkDir;
    this.permissionMode = options.permissionMode;
    this.builtinToolFiltering = options.builtinToolFiltering;
    this.messages = messages;
    this.pendingRerun = Boolean(options.continueFrom);
    this.turn = null;
    this.ended = null;
  }

  live(what) {
    if (this.ended) throw harnessError(`Session ${this.sessionId} has ended (${this.ended}); it cannot ${what}.`);
  }

  control(turn) {
    return {
      submitToolResult: async ({ toolCallId, output, isError }) => turn.answer(`result:${toolCallId}`, { output, isError }),
      submitToolApproval: async ({ approvalId, approved, reason }) => turn.answer(`approval:${approvalId}`, { approved, reason }),
      done: turn.slice(),
    };
  }

  async doPromptTurn(options) {
    this.live('start a turn');
    if (this.turn) throw harnessError(`Session ${this.sessionId} already has a turn in flight.`);
    if (options.responseFormat?.type === 'json') throw capabilityError(`Harness '${HARNESS_ID}' does not support JSON response formats.`);
    this.turn = new Turn(this, options);
    return this.control(this.turn);
  }

  async doContinueTurn(options) {
    this.live('continue a turn');
    if (this.turn) {
      // The turn is still running in this process: attach to it.
      this.turn.attach(options.emit);
      return this.control(this.turn);
    }
    if (!this.pendingRerun) throw harnessError(`Session ${this.sessionId} has no unfinished turn to continue.`);
    this.pendingRerun = false;
    // Lossy: the in-flight step is asked of the model again from the saved conversation.
    while (this.messages.length && this.messages.at(-1).role === 'assistant') this.messages.pop();
    this.turn = new Turn(this, options);
    return this.control(this.turn);
  }

  state(type) {
    return { type, harnessId: HARNESS_ID, specificationVersion: 'harness-v1', data: { messages: this.messages } };
  }

  async doSuspendTurn() {
    this.live('suspend a turn');
    this.turn?.detach();
    return this.state('continue-turn');
  }

  async doCompact() {
    throw capabilityError(`Harness '${HARNESS_ID}' does not support manual compaction.`);
  }

  async doDetach() {
    this.live('detach');
    this.ended = 'detached';
    return this.state('resume-session');
  }

  async doStop() {
    this.live('stop');
    this.ended = 'stopped';
    return this.state('resume-session');
  }

  async doDestroy() {
    this.ended = 'destroyed';
  }
}

/**
 * The example harness.
 * @param {{baseUrl: string, apiKey?: string, model?: string}} settings
 */
export function createExampleHarness(settings = {}) {
  if (typeof settings.baseUrl !== 'string') {
    throw new Error('createExampleHarness: settings.baseUrl (an Anthropic Messages endpoint) is required');
  }
  const harness = {
    specificationVersion: 'harness-v1',
    harnessId: HARNESS_ID,
    settings,
    supportsBuiltinToolApprovals: true,
    supportsBuiltinToolFiltering: true,
    builtinTools: Object.fromEntries(
      Object.entries(BUILTINS).map(([key, tool]) => [
        key,
        {
          description: tool.description,
          inputSchema: { jsonSchema: tool.schema },
          nativeName: tool.nativeName,
          commonName: tool.commonName,
          toolUseKind: tool.toolUseKind,
        },
      ]),
    ),
    async doStart(options) {
      let messages = [];
      if (options.continueFrom) {
        checkState(options.continueFrom, 'continue-turn');
        messages = structuredClone(options.continueFrom.data.messages);
      } else if (options.resumeFrom) {
        checkState(options.resumeFrom, 'resume-session');
        messages = structuredClone(options.resumeFrom.data.messages);
      }
      return new ExampleSession(harness, options, messages);
    },
  };
  return harness;
}
