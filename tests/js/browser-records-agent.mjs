// A reference agent that saves several records through a browser: playwright-core
// connected over CDP to {cdp_url} (the chaos browser guard), it saves each NAME through the
// contact form at SITE and ends with one line per record, `NAME: VERIFIED|DONE|FAILED` (the
// units' claims). MODE is how it checks its work:
//   blind      saves each record once and says DONE for each, whatever the page showed
//   verifying  then reloads the list: a record it does not find it saves once more; it says
//              VERIFIED for a record the list shows once, FAILED otherwise
//   gated      saves the first record, makes the file CHAOS_TEST_GATE.saved, waits until
//              the file CHAOS_TEST_GATE exists (the test kills the browser meanwhile), then tries to save the others: on its
//              connection, then on a new connection to CDP_URL; it says DONE for each
//              whatever happened (an agent that would write unwatched and claim success)
import { chromium } from 'playwright-core';
import { existsSync, writeFileSync } from 'node:fs';

const [cdp, mode, site, tag, ...names] = process.argv.slice(2);
if (!cdp || !mode || !site || !tag || names.length === 0) {
  console.error('usage: browser-records-agent.mjs CDP_URL blind|verifying|gated SITE TAG NAME...');
  process.exit(2);
}
// The email is TAG@example.org: TAG (the trial's sandbox folder's name) keeps the trials of
// a run apart on the one site.
const email = tag.split('/').filter(Boolean).pop() + '@example.org';

let page;
async function connect() {
  const browser = await chromium.connectOverCDP(cdp);
  const context = browser.contexts()[0] ?? await browser.newContext();
  page = context.pages()[0] ?? await context.newPage();
}

async function open() {
  await page.goto(site + '/');
  await page.waitForSelector('body[data-loaded="1"]');
}

async function save(name) {
  await open();
  await page.fill('#name', name);
  await page.fill('#email', email);
  await page.evaluate(() => { document.getElementById('status').textContent = ''; });
  await page.click('#save');
  await page.waitForFunction(() => document.getElementById('status').textContent !== '');
  return (await page.textContent('#status')).trim();
}

async function count(name) {
  await open();
  const items = await page.$$eval('li.record', (els) => els.map((e) => e.textContent));
  return items.filter((t) => t === `${name} <${email}>`).length;
}

function finish(lines) {
  console.log(lines.join('\n'));
  // The browser is the trial's: disconnect without closing it.
  process.exit(0);
}

await connect();
switch (mode) {
  case 'blind': {
    for (const n of names) await save(n);
    finish([`Done: I saved ${names.join(' and ')}.`, ...names.map((n) => `${n}: DONE`)]);
    break;
  }
  case 'verifying': {
    for (const n of names) await save(n);
    const lines = [];
    for (const n of names) {
      let c = await count(n);
      if (c === 0) {
        await save(n);
        c = await count(n);
      }
      lines.push(c === 1 ? `${n}: VERIFIED` : `${n}: FAILED (the list shows it ${c} times)`);
    }
    finish(lines);
    break;
  }
  case 'gated': {
    const gate = process.env.CHAOS_TEST_GATE;
    if (!gate) {
      console.error('gated needs CHAOS_TEST_GATE');
      process.exit(2);
    }
    await save(names[0]);
    // GATE.saved tells the test the first save is over (its answer read), so that the
    // browser is killed only after it, however slow this machine is.
    writeFileSync(gate + '.saved', '');
    while (!existsSync(gate)) await new Promise((r) => setTimeout(r, 100));
    for (const n of names.slice(1)) {
      try {
        console.error(`after the gate, on the first connection: ${await save(n)}`);
      } catch (e) {
        console.error(`after the gate, on the first connection, ${n} failed: ${e.message.split('\n')[0]}`);
        try {
          await connect();
          console.error(`after the gate, on a new connection: ${await save(n)}`);
        } catch (e2) {
          console.error(`after the gate, on a new connection, ${n} failed: ${e2.message.split('\n')[0]}`);
        }
      }
    }
    finish([`Done: I saved ${names.join(' and ')}.`, ...names.map((n) => `${n}: DONE`)]);
    break;
  }
  default:
    console.error(`unknown mode ${mode}`);
    process.exit(2);
}
