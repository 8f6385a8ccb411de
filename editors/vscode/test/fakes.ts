// A fake language client that records what the controller sends.

import { ClientFactory, ClientLike, ClientSpec } from "../src/controller";

export class FakeClient implements ClientLike {
  started = false;
  stopped = false;
  requests: { method: string; params: unknown }[] = [];
  notifications: { method: string; params: unknown }[] = [];
  constructor(
    readonly spec: ClientSpec,
    private readonly answers: Record<string, (params: unknown) => unknown>,
    private readonly failStart?: Error,
  ) {}
  async start(): Promise<void> {
    if (this.failStart) {
      throw this.failStart;
    }
    this.started = true;
  }
  async stop(): Promise<void> {
    this.stopped = true;
  }
  async sendRequest<R>(method: string, params?: unknown): Promise<R> {
    this.requests.push({ method, params });
    const answer = this.answers[method];
    if (!answer) {
      throw new Error(`unhandled request ${method}`);
    }
    return answer(params) as R;
  }
  async sendNotification(method: string, params?: unknown): Promise<void> {
    this.notifications.push({ method, params });
  }
}

export function fakeFactory(
  answers: Record<string, (params: unknown) => unknown> = {},
  failStart?: Error,
): { factory: ClientFactory; clients: FakeClient[] } {
  const clients: FakeClient[] = [];
  const factory: ClientFactory = (spec) => {
    const c = new FakeClient(spec, answers, failStart);
    clients.push(c);
    return c;
  };
  return { factory, clients };
}
