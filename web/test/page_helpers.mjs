// Helpers shared by the browser test files: headless Debian Chromium (playwright-core, never a
// downloaded browser) on a fresh profile, pages of the test harness, and running code against the
// page's engine.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { chromium } from 'playwright-core';

import { startServer } from '../scripts/serve.mjs';

const chromiumPath = process.env.OXIDIZE_CHROMIUM || '/usr/bin/chromium';

/** A persistent context on a fresh profile (the Cache API needs one). */
export async function launchBrowser() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'oxidize-chromium-'));
  return chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    viewport: { width: 900, height: 900 },
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync',
    ],
  });
}

/** A page at base + pathname, its console and errors appended to consoleLines. */
export async function openPage(browser, consoleLines, base, pathname = '/test/harness.html') {
  const page = await browser.newPage();
  page.on('console', (m) => consoleLines.push(`[${base}] ${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => consoleLines.push(`[${base}] pageerror: ${e.message}`));
  await page.goto(base + pathname);
  if (pathname.startsWith('/test/')) await page.waitForFunction(() => window.harnessReady === true);
  return page;
}

/** Runs fn(engine, arg, oxidize) in the page with a (shared, per page) engine. */
export function inEngine(page, fn, arg) {
  return page.evaluate(
    async ([src, a]) => {
      window.engine ??= await window.oxidize.createEngine();
      const f = new Function(`return (${src})`)();
      return f(window.engine, a, window.oxidize);
    },
    [fn.toString(), arg],
  );
}

/** The EngineError a call rejects with, as {code, message, name}, or null if it resolved. */
export function rejection(page, fn, arg) {
  return inEngine(
    page,
    `async (engine, a, ox) => {
      try { await (${fn.toString()})(engine, a, ox); return null; }
      catch (e) { return { name: e.name, code: e.code, message: e.message, isEngineError: e instanceof ox.EngineError }; }
    }`,
    arg,
  );
}

/**
 * The browser and the two test servers (cross-origin isolated and not, with the test routes and
 * /__test/generated/ from generatedDir); close() ends them and writes the console log there.
 */
export async function startBrowserAndServers(generatedDir, consoleLines) {
  const servers = {
    isolated: await startServer({ port: 0, isolated: true, testRoutes: true, generatedDir }),
    plain: await startServer({ port: 0, isolated: false, testRoutes: true, generatedDir }),
  };
  const browser = await launchBrowser();
  const close = async () => {
    await browser.close();
    await servers.isolated.close();
    await servers.plain.close();
    fs.writeFileSync(path.join(generatedDir, 'browser-console.log'), consoleLines.join('\n') + '\n');
  };
  return { browser, servers, close };
}
