import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv, repoRoot, runScript } from '../support/run-script.ts';

// Its deliveries to a real receiver: test/receiver/main.test.ts and test/scripts/dev-stack.test.ts.
describe('scripts/sign-and-send.ts', () => {
  it('without --secret, WEBHOOK_SECRET or secrets from npm start, exits 2 naming WEBHOOK_SECRET and sends nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sign-and-send-'));
    try {
      writeFileSync(join(dir, 'event.json'), '{}');
      const result = await runScript(
        'scripts/sign-and-send.ts',
        [join(dir, 'event.json'), '--url', 'http://127.0.0.1:9/webhooks'],
        cleanEnv({ STACK_DATA_DIR: dir }),
      );
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include('WEBHOOK_SECRET: not set, and there are no development secrets');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers operator mistakes with one line and exit 2, and an unreachable receiver with one line and exit 1, never a stack trace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sign-and-send-'));
    try {
      const file = join(dir, 'event.json');
      writeFileSync(file, '{}');
      const env = cleanEnv({ STACK_DATA_DIR: dir, WEBHOOK_SECRET: 'a-secret' });
      for (const [args, code, says] of [
        [[file, '--colour'], 2, "Unknown option '--colour'"],
        // The usage alone did not say what was wrong.
        [[], 2, 'sign-and-send: name the JSON file to send'],
        [[join(dir, 'missing.json')], 2, `cannot read ${join(dir, 'missing.json')}`],
        // One file a call: a second would silently not be sent.
        [[file, file], 2, 'one file at a time; got 2'],
        [[file, '--url', 'http://127.0.0.1:9/webhooks'], 1, 'cannot reach http://127.0.0.1:9/webhooks'],
        // fetch refuses a URL with credentials in a message that repeats it, password and all.
        [
          [file, '--url', 'http://ops:hunter2@127.0.0.1:9/webhooks'],
          2,
          '--url: expected a URL without a user or password',
        ],
        [[file, '--url', 'not a url'], 2, '--url: expected an http:// or https:// URL'],
        // `--secret "$S"` with S unset signed with the stack's development secret without a word.
        [[file, '--secret', ''], 2, '--secret: expected a value, got an empty one'],
      ] as const) {
        const result = await runScript('scripts/sign-and-send.ts', [...args], env);
        expect(result.code, args.join(' ')).to.equal(code);
        expect(result.stderr, args.join(' ')).to.include(says);
        expect(result.stderr, args.join(' ')).not.to.include('hunter2');
        expect(result.stderr, args.join(' ')).to.not.match(/^\s+at /m);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // A receiver that takes the connection and never answers (a hung process, a wrong port that
  // happens to accept) held the tool for minutes; the contract has receivers answer in 1.5 s.
  it('gives up on a receiver that never answers after --timeout, with one line and exit 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sign-and-send-'));
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      writeFileSync(join(dir, 'event.json'), '{}');
      const url = `http://127.0.0.1:${port}/webhooks`;
      const started = performance.now();
      const result = await runScript(
        'scripts/sign-and-send.ts',
        [join(dir, 'event.json'), '--url', url, '--timeout', '1'],
        cleanEnv({ STACK_DATA_DIR: dir, WEBHOOK_SECRET: 'a-secret' }),
      );
      expect(result.code, result.stderr).to.equal(1);
      expect(result.stderr).to.include(`no answer from ${url} within 1 s`);
      expect(performance.now() - started).to.be.below(10_000);
      // Past setTimeout's longest delay (2147484 s) the wait gave up at once, as if 1 ms.
      for (const bad of ['0', 'soon', '1.5', '3601', '2147484'])
        expect(
          (
            await runScript(
              'scripts/sign-and-send.ts',
              [join(dir, 'event.json'), '--url', url, '--timeout', bad],
              cleanEnv({ STACK_DATA_DIR: dir, WEBHOOK_SECRET: 'a-secret' }),
            )
          ).stderr,
          bad,
        ).to.include('--timeout: expected a whole number of seconds from 1 to 3600');
    } finally {
      silent.closeAllConnections();
      silent.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // fetch followed a 301/302/303 as a GET without the body and reported its 200 as delivered; a
  // 307/308 to another host carried the signature there.
  it('does not follow a redirect: exit 1 naming where it pointed, the webhook not sent again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sign-and-send-'));
    const seen: string[] = [];
    const redirecting = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      if (req.url === '/webhooks') res.writeHead(301, { location: '/ok' }).end();
      else res.writeHead(200).end('{}');
    });
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    const { port } = redirecting.address() as AddressInfo;
    try {
      writeFileSync(join(dir, 'event.json'), '{}');
      const result = await runScript(
        'scripts/sign-and-send.ts',
        [join(dir, 'event.json'), '--url', `http://127.0.0.1:${port}/webhooks`],
        cleanEnv({ STACK_DATA_DIR: dir, WEBHOOK_SECRET: 'a-secret' }),
      );
      expect(result.code, result.stderr).to.equal(1);
      expect(result.stdout).to.match(/^301 /);
      expect(result.stderr).to.include('the receiver redirected to /ok: not followed');
      expect(seen).to.deep.equal(['POST /webhooks']);
    } finally {
      redirecting.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // A sample is dated the day it was written, and a tray shows it for 90 days after: sent later,
  // it was stored and shown to no one. --now moves its times to now, and signs what it sends.
  it('with --now, sends the event with its times moved to now, signed as sent', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sign-and-send-'));
    const received: { body: string; signature: string }[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        received.push({ body, signature: String(req.headers['x-service-signature']) });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const { port } = receiver.address() as AddressInfo;
    try {
      const started = Date.now();
      const result = await runScript(
        'scripts/sign-and-send.ts',
        [
          join(repoRoot, 'examples/events/comment.json'),
          '--now',
          '--url',
          `http://127.0.0.1:${port}/webhooks`,
        ],
        cleanEnv({ STACK_DATA_DIR: dir, WEBHOOK_SECRET: 'a-secret' }),
      );
      expect(result.code, result.stderr).to.equal(0);
      const [{ body, signature }] = received as [{ body: string; signature: string }];
      const sent = JSON.parse(body) as { data: { comment: { createdAt: string; text: string } } };
      const at = Date.parse(sent.data.comment.createdAt);
      expect(at).to.be.within(started - 1_000, Date.now());
      expect(sent.data.comment.text).to.equal('See you there');
      expect(signature).to.equal(createHmac('sha256', 'a-secret').update(body).digest('base64'));
    } finally {
      receiver.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Without --url, where npm start's receiver listens: its port, host and webhook path.
  it('sends to the receiver RECEIVER_PORT, RECEIVER_HOST and WEBHOOK_PATH name', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sign-and-send-'));
    try {
      writeFileSync(join(dir, 'event.json'), '{}');
      const result = await runScript(
        'scripts/sign-and-send.ts',
        [join(dir, 'event.json')],
        cleanEnv({
          STACK_DATA_DIR: dir,
          WEBHOOK_SECRET: 'a-secret',
          RECEIVER_PORT: '9',
          WEBHOOK_PATH: '/hooks/in',
        }),
      );
      expect(result.code).to.equal(1);
      expect(result.stderr).to.include('cannot reach http://127.0.0.1:9/hooks/in');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // npm runs a script at the package's root; the folder the command was typed in is INIT_CWD.
  it('reads a relative path from the folder `npm run` was typed in', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sign-and-send-'));
    try {
      writeFileSync(join(dir, 'event.json'), '{}');
      const env = { STACK_DATA_DIR: dir, WEBHOOK_SECRET: 'a-secret', RECEIVER_PORT: '9' };
      const typedIn = await runScript(
        'scripts/sign-and-send.ts',
        ['event.json'],
        cleanEnv({ ...env, INIT_CWD: dir, npm_lifecycle_event: 'sign-and-send' }),
      );
      expect(typedIn.code).to.equal(1);
      expect(typedIn.stderr).to.include('error: cannot reach http://127.0.0.1:9/webhooks');
      // Run by node itself, the path is the process's own working directory's.
      const direct = await runScript('scripts/sign-and-send.ts', ['event.json'], cleanEnv(env));
      expect(direct.code).to.equal(2);
      expect(direct.stderr).to.include('cannot read');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('with --scheme', () => {
    const send = async (args: string[], env: NodeJS.ProcessEnv = {}) => {
      const dir = mkdtempSync(join(tmpdir(), 'sign-and-send-'));
      try {
        writeFileSync(join(dir, 'event.json'), '{}');
        return await runScript(
          'scripts/sign-and-send.ts',
          [join(dir, 'event.json'), '--url', 'http://127.0.0.1:9/webhooks', ...args],
          cleanEnv({ STACK_DATA_DIR: dir, ...env }),
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    };

    it('exits 2 naming --scheme for an unknown scheme, and suggests the one meant', async () => {
      const result = await send(['--scheme', 'standard'], { WEBHOOK_SECRET: 'x' });
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include('--scheme: not a scheme');
      expect(result.stderr).to.include('did you mean "standard-webhooks"?');
    });

    it('standard-webhooks: exits 2 without a secret (the machine’s development secret is not a whsec_ one)', async () => {
      const result = await send(['--scheme', 'standard-webhooks']);
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include('WEBHOOK_SECRET: not set');
    });

    it('platform: exits 2 on --id or --timestamp, which its signature does not carry', async () => {
      for (const flag of ['--id', '--timestamp']) {
        const result = await send([flag, '1'], { WEBHOOK_SECRET: 'a-secret' });
        expect(result.code, flag).to.equal(2);
        expect(result.stderr, flag).to.include(`${flag}: only a standard-webhooks delivery carries one`);
      }
    });

    it('standard-webhooks: exits 2 on a --timestamp that is not whole seconds (an empty one is not 0)', async () => {
      const secret = `whsec_${Buffer.alloc(24, 1).toString('base64')}`;
      for (const timestamp of ['1.5', '1e9', ' 7']) {
        const result = await send(['--scheme', 'standard-webhooks', '--timestamp', timestamp], {
          WEBHOOK_SECRET: secret,
        });
        expect(result.code, timestamp).to.equal(2);
        expect(result.stderr, timestamp).to.include('--timestamp: expected Unix time in seconds');
      }
      const empty = await send(['--scheme', 'standard-webhooks', '--timestamp', ''], {
        WEBHOOK_SECRET: secret,
      });
      expect(empty.code).to.equal(2);
      expect(empty.stderr).to.include('--timestamp: expected a value, got an empty one');
    });

    it('standard-webhooks: exits 2 on --header, whose signature always goes in webhook-signature', async () => {
      const secret = `whsec_${Buffer.alloc(24, 1).toString('base64')}`;
      const result = await send(['--scheme', 'standard-webhooks', '--header', 'x-sig'], {
        WEBHOOK_SECRET: secret,
      });
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include(
        '--header: a standard-webhooks signature always goes in webhook-signature',
      );
    });
  });
});
