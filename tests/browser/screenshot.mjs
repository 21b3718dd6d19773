// Screenshot of a report page (a file written by `trainscope report --html`
// or an agent's URL) in headless Debian Chromium, 1280 px wide, full page;
// fails on console errors like report_page.mjs. For docs/images.
//   node screenshot.mjs PAGE.html|http://HOST:PORT/ OUT.png
import { chromium } from 'playwright-core';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [target, out] = process.argv.slice(2);
if (!target || !out) {
  console.error('usage: node screenshot.mjs PAGE.html|URL OUT.png');
  process.exit(2);
}
const url = /^https?:/.test(target) ? target : pathToFileURL(path.resolve(target)).href;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const problems = [];
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('console', (m) => { if (['error', 'warning'].includes(m.type())) problems.push(m.text()); });
  page.on('pageerror', (e) => problems.push(e.message));
  const res = await page.goto(url, { waitUntil: 'load' });
  if (res && res.headers()['content-security-policy'] === undefined && /^https?:/.test(url)) {
    problems.push('no Content-Security-Policy header');
  }
  await page.screenshot({ path: out, fullPage: true });
} finally {
  await browser.close();
}
if (problems.length) {
  console.error(`FAIL ${url}:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`wrote ${out}`);
