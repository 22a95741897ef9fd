// A fixture adapter for the kit's tests: a runtime that reads its events the way
// upstream's sandbox channel does. Each finish-step it emits carries the channel's
// hidden event checkpoint; pinning one makes the suspension cursor point just after
// that finish-step (STOP-008), else the cursor is the last event emitted. The cursor
// comes back in the continue state's data, so a test can see which one was taken.

const HARNESS_ID = 'checkpoints';
const EVENT_CHECKPOINT = Symbol.for('vercel.ai.harness.sandboxChannelEventCheckpoint');

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

// Two steps of text, then the turn's finish.
function turnEvents() {
  const step = (id, text) => [
    { type: 'text-start', id },
    { type: 'text-delta', id, delta: text },
    { type: 'text-end', id },
    { type: 'finish-step', finishReason: { unified: 'stop', raw: 'stop' }, usage: USAGE },
  ];
  return [
    { type: 'stream-start', modelId: 'fixture' },
    ...step('t1', 'one'),
    ...step('t2', 'two'),
    { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, totalUsage: USAGE },
  ];
}

function state(type, data) {
  return { type, specificationVersion: 'harness-v1', harnessId: HARNESS_ID, data };
}

function unsupported(message) {
  return Object.assign(new Error(message), {
    name: 'AI_HarnessCapabilityUnsupportedError',
    harnessId: HARNESS_ID,
  });
}

export function createCheckpointHarness() {
  return {
    specificationVersion: 'harness-v1',
    harnessId: HARNESS_ID,
    builtinTools: {},
    async doStart({ sessionId }) {
      let emitted = 0;
      let pinned;
      let suspend = () => {};
      const withCheckpoint = (event, eventId) => {
        Object.defineProperty(event, EVENT_CHECKPOINT, {
          value: {
            pin: () => {
              const token = {};
              pinned = { eventId, token };
              return () => {
                if (pinned?.token === token) pinned = undefined;
              };
            },
          },
        });
        return event;
      };
      return {
        sessionId,
        isResume: false,
        async doPromptTurn({ emit }) {
          let suspended = false;
          let wake = () => {};
          suspend = () => {
            suspended = true;
            wake();
          };
          const done = (async () => {
            for (const event of turnEvents()) {
              if (suspended) return;
              emitted += 1;
              emit(event.type === 'finish-step' ? withCheckpoint(event, emitted) : event);
              // Let the consumer read (and pin) before the next event, as a channel's
              // socket would.
              await new Promise((resolve) => {
                wake = resolve;
                setTimeout(resolve, 5);
              });
            }
          })();
          return { async submitToolResult() {}, done };
        },
        async doContinueTurn() {
          throw unsupported('this fixture does not continue turns');
        },
        async doSuspendTurn() {
          suspend();
          return state('continue-turn', { cursor: pinned?.eventId ?? emitted, emitted });
        },
        async doCompact() {
          throw unsupported('this fixture does not compact');
        },
        async doDetach() {
          return state('resume-session', {});
        },
        async doStop() {
          return state('resume-session', {});
        },
        async doDestroy() {},
      };
    },
  };
}
