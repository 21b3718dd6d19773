// Renders report JSON fixtures with the real `trainscope report --from-json
// FILE --html OUT` and loads each page in headless Debian Chromium through
// playwright-core: no console errors (CSP violations are errors), no page
// errors, no request besides the page itself, and each scenario's facts are
// on the page (hot PS marked, straggler greyed, a stalled job first with its
// per-rank table, hostile text shown literally, 200 workers drawn without
// overlapping boxes).
//
// node report_page.mjs --trainscope PATH --out DIR [--screenshots DIR]
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) =>
    a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc, []));
const trainscope = args.trainscope;
const out = args.out;
if (!trainscope || !out) {
  console.error('usage: node report_page.mjs --trainscope PATH --out DIR [--screenshots DIR]');
  process.exit(2);
}
fs.mkdirSync(out, { recursive: true });
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
if (!fs.existsSync(chromiumPath)) {
  console.error(`FAIL: ${chromiumPath} is missing; install Debian's chromium (bash scripts/install-deps.sh)`);
  process.exit(1);
}

// 20 PS, 200 workers over 10 nodes, ps-0 hot: the largest detailed job.
function bigJobReport() {
  const job = { namespace: 'training', training_job: 'big', ps: [], workers: [],
    ps_traffic_share: {}, ps_bytes_per_second: {}, worker_ps_bytes_per_second: {},
    links: [], pod_nodes: {}, measured_from: 'workers' };
  const total = 400e6;
  const share = (i) => (i === 0 ? 0.43 : 0.57 / 19);
  for (let i = 0; i < 20; i++) {
    const pod = `big-ps-${i}`;
    job.ps.push(pod);
    job.ps_traffic_share[pod] = share(i);
    job.ps_bytes_per_second[pod] = share(i) * total;
    job.pod_nodes[pod] = `node-${i % 10}`;
  }
  for (let w = 0; w < 200; w++) {
    const pod = `big-worker-${w}`;
    job.workers.push(pod);
    job.pod_nodes[pod] = `node-${(20 + w) % 10}`;
    job.worker_ps_bytes_per_second[pod] = total / 200;
    for (let i = 0; i < 20; i++) {
      job.links.push({ worker: pod, ps: `big-ps-${i}`, bytes_per_second: (total / 200) * share(i) });
    }
  }
  return { generated_at: '2026-11-23T16:00:00Z', node: 'cluster', jobs: [job],
    diagnoses: [{ kind: 'hot_parameter_server', severity: 'warning', namespace: 'training',
      training_job: 'big', pod: 'big-ps-0', since: '2026-11-23T15:58:00Z',
      summary: 'big-ps-0 carries 43% of job big\'s parameter-server traffic (20 PS, fair share 5%).',
      evidence: { share: 0.43 }, recommendations: ['Partition the embedding.'] }] };
}

const evil = '<script>alert("pwned")</script>';
const scenarios = [
  // A real report: the agent's /api/v1/report at the end of scripts/demo.sh
  // (trainsim's hot-ps-embedding scenario).
  { name: 'hot-ps-trainsim', fixture: 'hot-ps-trainsim.json', screenshot: 'hot-ps',
    async check(page) {
      await expectCount(page, '[data-role="ps"][data-hot="true"][data-pod="ctr-ps-0"]', 1);
      await expectCount(page, '[data-role="ps"][data-hot="true"]', 1);
      await expectCount(page, 'svg.topology g.pod', 8);
      await expectCount(page, 'svg.topology g.edges line', 16);
    } },
  { name: 'hot-ps', fixture: 'hot-ps.json',
    async check(page) {
      await expectCount(page, '[data-role="ps"][data-hot="true"][data-pod="ctr-ps-0"]', 1);
      await expectCount(page, '[data-role="ps"][data-hot="true"]', 1);
      await expectCount(page, 'article.diag[data-kind="hot_parameter_server"]', 1);
      await expectCount(page, 'svg.shares [data-pod="ctr-ps-0"]', 1);
      await expectCount(page, 'svg.topology g.pod', 10);
      await expectText(page, 'ctr-ps-0 carries 87%');
    } },
  { name: 'straggler', fixture: 'straggler.json', screenshot: 'straggler',
    async check(page) {
      await expectCount(page, 'g.pod.straggler[data-straggler="true"][data-pod="ranker-worker-3"]', 1);
      await expectCount(page, 'g.pod.straggler', 1);
      await expectCount(page, '[data-hot="true"]', 0);
      await expectCount(page, 'article.diag', 2);
    } },
  // A stalled job (issue 33) listed after a critical hot PS: its banner with
  // the per-rank table is the first thing on the page, the suspect's row
  // stands out, its job is drawn first, and a peer name with markup is text.
  { name: 'stalled', fixture: 'stalled.json',
    async check(page) {
      await expectCount(page, 'section.stalled', 1);
      await expectCount(page, 'section.stalled table.ranks tbody tr', 3);
      await expectCount(page, 'section.stalled tr.suspect[data-pod="bert-worker-1"]', 1);
      await expectCount(page, 'tr.suspect', 1);
      await expectCount(page, 'tr b, td b', 0);
      await expectText(page, 'training/<b>bert-worker-1</b>');
      const layout = await page.evaluate(() => {
        const top = (sel) => document.querySelector(sel).getBoundingClientRect().top;
        const bg = (sel) => getComputedStyle(document.querySelector(sel)).backgroundColor;
        return {
          firstSection: document.querySelector('main section').className,
          firstTable: document.querySelector('table').className,
          firstJob: document.querySelector('section.job').dataset.job,
          banner: top('section.stalled'), job: top('section.job'),
          hot: top('article.diag[data-kind="hot_parameter_server"]'),
          suspectBg: bg('tr.suspect td'), otherBg: bg('tr[data-pod="bert-worker-0"] td'),
        };
      });
      if (layout.firstSection !== 'stalled') throw new Error(`first section: ${layout.firstSection}`);
      if (layout.firstTable !== 'ranks') throw new Error(`first table: ${layout.firstTable}`);
      if (layout.firstJob !== 'bert') throw new Error(`first job drawn: ${layout.firstJob}`);
      if (!(layout.banner < layout.job && layout.banner < layout.hot)) {
        throw new Error(`banner not on top: ${JSON.stringify(layout)}`);
      }
      if (layout.suspectBg === layout.otherBg) throw new Error(`suspect row not highlighted: ${layout.suspectBg}`);
      await expectCount(page, 'section.job[data-job="bert"] g.pod[data-pod="bert-worker-1"] text.badge-text', 1);
    } },
  { name: 'multi-job', fixture: 'multi-job.json', screenshot: 'multi-job',
    async check(page) {
      await expectCount(page, 'section.job', 2);
      await expectCount(page, 'section.job[data-job="ctr"] g.node-group', 3);
      await expectCount(page, 'section.job[data-job="ctr"] g.node-group.marked[data-node="node-a"]', 1);
      await expectCount(page, '[data-hot="true"][data-pod="ctr-ps-0"]', 1);
      await expectText(page, 'Other diagnoses');
    } },
  { name: 'hostile', fixture: 'hostile.json',
    async check(page) {
      await expectCount(page, 'script, img, iframe, object, embed, a[href^="javascript"]', 0);
      await expectCount(page, `[data-pod="${cssString(evil)}"][data-hot="true"]`, 1);
      const text = await page.evaluate(() => document.body.innerText);
      for (const s of [evil, '</p><script>alert(3)</script>', 'Übungs-工作者-🚀-0',
        '<a href="javascript:alert(5)">click</a>', 'job<img src=x onerror=alert(1)>']) {
        if (!text.includes(s)) throw new Error(`hostile text not shown literally: ${s}`);
      }
      const title = await page.title();
      if (!title.includes('node<style>')) throw new Error(`title not literal: ${title}`);
    } },
  { name: 'workers-200', report: bigJobReport(),
    async check(page) {
      await expectCount(page, 'svg.topology g.pod', 220);
      await expectCount(page, '[data-hot="true"][data-pod="big-ps-0"]', 1);
      await expectCount(page, 'svg.topology g.node-group', 10);
      // Drawn boxes never overlap, as the browser lays them out.
      const overlaps = await page.evaluate(() => {
        const r = [...document.querySelectorAll('svg.topology g.pod > rect:not(.badge)')]
          .map((e) => e.getBoundingClientRect());
        let n = 0;
        for (let i = 0; i < r.length; i++) for (let j = i + 1; j < r.length; j++) {
          const a = r[i], b = r[j];
          if (a.left < b.right - 0.5 && b.left < a.right - 0.5 &&
              a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5) n++;
        }
        return n;
      });
      if (overlaps) throw new Error(`${overlaps} overlapping pod boxes`);
    } },
];

function cssString(s) { return s.replace(/\\/g, '\\\\').replace(/"/g, '\\"'); }

async function expectCount(page, selector, want) {
  const got = await page.locator(selector).count();
  if (got !== want) throw new Error(`${selector}: ${got} elements, want ${want}`);
}
async function expectText(page, want) {
  const text = await page.evaluate(() => document.body.innerText);
  if (!text.includes(want)) throw new Error(`page does not say "${want}"`);
}

function render(s) {
  let input = s.fixture ? path.join(here, 'fixtures', s.fixture) : path.join(out, `${s.name}.json`);
  if (s.report) fs.writeFileSync(input, JSON.stringify(s.report));
  const html = path.join(out, `${s.name}.html`);
  const started = process.hrtime.bigint();
  execFileSync(trainscope, ['report', '--from-json', input, '--html', html], { stdio: 'pipe' });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  return { html, ms };
}

const browser = await chromium.launch({
  executablePath: chromiumPath,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
let failed = 0;
try {
  for (const s of scenarios) {
    const { html, ms } = render(s);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const problems = [];
    page.on('console', (m) => { if (['error', 'warning'].includes(m.type())) problems.push(`console ${m.type()}: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('dialog', (d) => { problems.push(`dialog opened: ${d.message()}`); d.dismiss(); });
    const url = pathToFileURL(html).href;
    page.on('request', (r) => { if (r.url() !== url) problems.push(`request: ${r.url()}`); });
    try {
      await page.goto(url, { waitUntil: 'load' });
      const csp = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
      if (!csp || !csp.includes("default-src 'none'")) problems.push(`no CSP meta: ${csp}`);
      await s.check(page);
      await page.screenshot({ path: path.join(out, `${s.name}.png`), fullPage: true });
      if (s.screenshot && args.screenshots) {
        await page.screenshot({ path: path.join(args.screenshots, `report-page-${s.screenshot}.png`), fullPage: true });
      }
    } catch (e) {
      problems.push(e.message);
    }
    await context.close();
    if (problems.length) {
      failed++;
      console.log(`FAIL ${s.name}:\n  ${problems.join('\n  ')}`);
    } else {
      console.log(`ok   ${s.name} (trainscope report --html: ${ms.toFixed(0)} ms, ${fs.statSync(html).size} bytes)`);
    }
  }
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
