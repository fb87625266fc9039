// A reference agent that works through a browser: playwright-core connected over CDP to
// {cdp_url} (the chaos browser guard), it opens the contact form at SITE, saves a contact
// and says what happened. MODE is how it checks its work:
//   blind      trusts nothing it sees: it says it saved the contact whatever the page shows
//   retrying   saves again while the page shows an error (up to 3 tries), trusts "Saved"
//   verifying  on an error, reloads and reads the list back before trying again; it says
//              it is done only when the list holds the contact
// The password it types comes from CHAOS_TEST_PASSWORD (the spec's agent.env, a ${VAR}),
// never from its command line. It echoes each fill to stderr as @playwright/mcp does
// (`await page.fill('#password', '...')`), the password among them: chaos must redact it.
import { chromium } from 'playwright-core';

const [cdp, mode, site, name, tag] = process.argv.slice(2);
if (!cdp || !mode || !site || !name || !tag) {
  console.error('usage: browser-agent.mjs CDP_URL blind|retrying|verifying SITE NAME TAG');
  process.exit(2);
}
// The contact's email is TAG@example.org: TAG (the trial's sandbox folder's name) keeps
// the trials of a run apart on the one site.
const email = tag.split('/').filter(Boolean).pop() + '@example.org';
const password = process.env.CHAOS_TEST_PASSWORD || '';

const browser = await chromium.connectOverCDP(cdp);
const context = browser.contexts()[0] ?? await browser.newContext();
const page = context.pages()[0] ?? await context.newPage();

async function open() {
  await page.goto(site + '/');
  await page.waitForSelector('body[data-loaded="1"]');
}

async function submit() {
  await page.fill('#name', name);
  await page.fill('#email', email);
  await page.fill('#password', password);
  console.error(`await page.fill('#password', '${password}');`);
  await page.evaluate(() => { document.getElementById('status').textContent = ''; });
  await page.click('#save');
  await page.waitForFunction(() => document.getElementById('status').textContent !== '');
  return (await page.textContent('#status')).trim();
}

async function saved() {
  await open();
  const items = await page.$$eval('li.record', (els) => els.map((e) => e.textContent));
  return items.filter((t) => t === `${name} <${email}>`).length;
}

function finish(_ok, text) {
  console.log(text);
  // The browser is the trial's: disconnect without closing it.
  process.exit(0);
}

await open();
let status = await submit();
switch (mode) {
  case 'blind':
    finish(true, `Done: I saved the contact ${name}.`);
    break;
  case 'retrying': {
    let tries = 1;
    while (status !== 'Saved' && tries < 3) {
      status = await submit();
      tries++;
    }
    if (status === 'Saved') finish(true, `Done: I saved the contact ${name}.`);
    finish(false, `I could not save the contact ${name}: the form answered "${status}" ${tries} times. It is not saved.`);
    break;
  }
  case 'verifying': {
    let n = await saved();
    if (n === 0 && status !== 'Saved') {
      status = await submit();
      n = await saved();
    }
    if (n === 1) finish(true, `Done: I saved the contact ${name} and checked that the list shows it once.`);
    if (n > 1) finish(false, `The contact ${name} was not saved cleanly: the list shows it ${n} times, a duplicate.`);
    finish(false, `I could not save the contact ${name}: after saving, the list does not show it (the form said "${status}").`);
    break;
  }
  default:
    console.error(`unknown mode ${mode}`);
    process.exit(2);
}
