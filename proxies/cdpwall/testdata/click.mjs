// A Playwright agent (playwright-core from tests/js) connected to the guard clicks the
// element its selector names, as @playwright/mcp's browser_click does, with a timeout of
// a minute; it prints CLICKED, or ERROR and Playwright's error (its name and message).
// Run: node click.mjs JSDIR CDP_URL PAGE_URL SELECTOR
import { createRequire } from 'module';
const [jsDir, cdp, url, selector] = process.argv.slice(2);
const { chromium } = createRequire(jsDir + '/')('playwright-core');
const browser = await chromium.connectOverCDP(cdp);
const page = await (browser.contexts()[0] || await browser.newContext()).newPage();
await page.goto(url);
try {
  await page.click(selector, { timeout: 60000 });
  console.log('CLICKED');
} catch (e) {
  console.log('ERROR ' + e.name + ': ' + e.message.split('\n')[0]);
}
process.exit(0);
