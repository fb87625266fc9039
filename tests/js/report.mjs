// Opens a chaos report in Debian's Chromium (headless), clicks the first matrix cell and
// its first trial, checks that the recorded calls appear and that each click brought its
// panel into view and named it in the address, opens those addresses afresh, and takes a
// screenshot.
//
//   node report.mjs REPORT_HTML SCREENSHOT_PNG
//
// Prints a JSON summary on stdout; exits non-zero when something is missing.
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [reportPath, shotPath] = process.argv.slice(2);
if (!reportPath || !shotPath) {
  console.error("usage: node report.mjs REPORT_HTML SCREENSHOT_PNG");
  process.exit(2);
}
const profile = mkdtempSync(join(tmpdir(), "chaos-chromium-"));
const browser = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--no-first-run", "--disable-sync", "--disable-quic"],
});
const out = { requests: [] };
try {
  const page = browser.pages()[0] || (await browser.newPage());
  // The report must not reach the network: record every request that is not the file itself.
  page.on("request", (r) => { if (!r.url().startsWith("file:")) out.requests.push(r.url()); });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(pathToFileURL(reportPath).href);
  out.title = await page.title();
  out.cells = await page.locator("td.cell").count();
  const wanted = process.env.CHAOS_CELL_CONDITION;
  const cell = wanted ? page.locator(`td.cell[data-condition="${wanted}"]`).first() : page.locator("td.cell").first();
  out.cellText = (await cell.innerText()).replace(/\s+/g, " ").trim();
  // inView: whether the element's top is within the window (a click's panel scrolled to).
  const inView = (sel) => page.evaluate((s) => {
    const e = document.querySelector(s);
    if (!e) return false;
    const r = e.getBoundingClientRect();
    return r.top >= 0 && r.top < window.innerHeight;
  }, sel);
  out.trialsInViewBeforeClick = await inView("#cellpanel");
  await cell.click();
  await page.waitForSelector("#trials-table tr.trial");
  out.trialsInView = await inView("#trials-table");
  out.cellHash = new URL(page.url()).hash;
  out.trials = await page.locator("#trials-table tr.trial").count();
  await page.locator("#trials-table tr.trial").first().click();
  await page.waitForSelector("#calls-table tr.call");
  out.callsInView = await inView("#trialpanel");
  out.trialHash = new URL(page.url()).hash;
  out.calls = await page.locator("#calls-table tr.call").count();
  out.firedRows = await page.locator("#calls-table tr.call.fired").count();
  out.callTools = await page.locator("#calls-table tr.call td:nth-child(2)").allInnerTexts();
  out.closing = await page.locator("#trialpanel .closing").innerText();
  out.review = await page.locator("#trialpanel p.review").allInnerTexts();
  out.agreement = await page.locator("#agreement").innerText();
  out.naCells = await page.locator("td.cell .rate", { hasText: "n/a" }).count();
  out.naGreen = await page.locator("td.cell .rate.zero", { hasText: "n/a" }).count();
  await page.screenshot({ path: shotPath, fullPage: true });

  // The addresses the clicks made, each opened in a page of its own.
  for (const [name, hash] of [["cellLink", out.cellHash], ["trialLink", out.trialHash]]) {
    const p2 = await browser.newPage();
    p2.on("pageerror", (e) => errors.push(name + ": " + String(e)));
    await p2.goto(pathToFileURL(reportPath).href + hash);
    const r = { trials: await p2.locator("#trials-table tr.trial").count(),
                selectedCell: (await p2.locator("td.cell.selected").getAttribute("data-condition").catch(() => null)),
                calls: await p2.locator("#calls-table tr.call").count(),
                closing: await p2.locator("#trialpanel .closing").count() };
    r.panelInView = await p2.evaluate((s) => {
      const e = document.querySelector(s);
      if (!e || !e.children.length) return false;
      const b = e.getBoundingClientRect();
      return b.top >= 0 && b.top < window.innerHeight;
    }, name === "cellLink" ? "#cellpanel" : "#trialpanel");
    out[name] = r;
    await p2.close();
  }
  out.errors = errors;
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
}
console.log(JSON.stringify(out));
if (out.requests.length || out.errors.length || !out.calls) process.exit(1);
