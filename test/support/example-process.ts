import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const EXAMPLES = path.resolve(__dirname, '..', '..', 'examples');

/** A compiled example run as a partner runs it: its own process, only the environment it documents. */
export class ExampleProcess {
  output = '';
  private constructor(private readonly child: ChildProcess) {
    child.stdout!.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
  }

  /** Starts `dist/examples/<file>` with only PATH, TMPDIR and `env`; resolves once its output matches `ready` (its group 1: the port). */
  static async start(file: string, env: Record<string, string>, ready: RegExp): Promise<{ example: ExampleProcess; port: number }> {
    const example = new ExampleProcess(spawn(process.execPath, [path.join(EXAMPLES, file)], { env: { PATH: process.env.PATH ?? '', TMPDIR: process.env.TMPDIR ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
    const match = await example.waitFor(ready, 10_000);
    return { example, port: Number(match[1]) };
  }

  /** Resolves with the first match of `pattern` in the output, polling it (the output arrives in chunks). */
  async waitFor(pattern: RegExp, timeoutMs = 15_000): Promise<RegExpExecArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = pattern.exec(this.output);
      if (match) return match;
      if (this.child.exitCode !== null || Date.now() > deadline) throw new Error(`no ${pattern} in the example's output:\n${this.output}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  stop(): void {
    this.child.kill();
  }
}
