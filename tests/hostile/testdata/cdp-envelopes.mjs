// A browser agent that tries to get a denied method and a denied click past the guard
// in every envelope CDP has, then clicks the denied element the way Playwright does. It
// prints one line: RESULTS {"case": "what the guard answered", ...}.
// Run: node cdp-envelopes.mjs JSDIR CDP_URL SITE_URL
import { createRequire } from 'module';
const [jsDir, cdp, site] = process.argv.slice(2);
const { chromium } = createRequire(jsDir + '/')('playwright-core');
const browser = await chromium.connectOverCDP(cdp);
const page = await (browser.contexts()[0] || await browser.newContext()).newPage();
await page.goto(site + '/');
const results = {};
const tryIt = async (name, fn) => {
  try { results[name] = 'ALLOWED ' + JSON.stringify(await fn()).slice(0, 100); }
  catch (e) { results[name] = e.message.split('\n')[0]; }
};
const session = await page.context().newCDPSession(page);
const browserSession = await browser.newBrowserCDPSession();
const { targetInfos } = await browserSession.send('Target.getTargets');
const target = targetInfos.find(t => t.type === 'page' && t.url.startsWith(site)).targetId;
// A non-flat session, reached only through Target.sendMessageToTarget.
const { sessionId } = await browserSession.send('Target.attachToTarget', { targetId: target, flatten: false });
const box = await page.locator('#reset').boundingBox();
const press = { type: 'mousePressed', x: box.x + box.width / 2, y: box.y + box.height / 2, button: 'left', clickCount: 1 };
const wrap = (inner, id) => ({ sessionId, message: JSON.stringify({ id, ...inner }) });
await tryIt('printToPDF', () => session.send('Page.printToPDF', {}));
await tryIt('printToPDF in sendMessageToTarget', () => browserSession.send('Target.sendMessageToTarget', wrap({ method: 'Page.printToPDF', params: {} }, 1)));
await tryIt('printToPDF two envelopes deep', () => browserSession.send('Target.sendMessageToTarget',
  { sessionId, message: JSON.stringify({ id: 2, method: 'Target.sendMessageToTarget', params: wrap({ method: 'Page.printToPDF', params: {} }, 3) }) }));
await tryIt('click in sendMessageToTarget', () => browserSession.send('Target.sendMessageToTarget', wrap({ method: 'Input.dispatchMouseEvent', params: press }, 4)));
await tryIt('exposeDevToolsProtocol', () => browserSession.send('Target.exposeDevToolsProtocol', { targetId: target }));
await tryIt('openDevTools', () => browserSession.send('Target.openDevTools', { targetId: target }));
await tryIt('devtools page', () => session.send('Page.navigate', { url: 'devtools://devtools/bundled/inspector.html?ws=127.0.0.1:1/devtools/browser' }));
await tryIt('devtools page in sendMessageToTarget', () => browserSession.send('Target.sendMessageToTarget', wrap({ method: 'Page.navigate', params: { url: 'devtools://devtools/bundled/inspector.html' } }, 5)));
await tryIt('playwright click', () => page.click('#reset', { timeout: 60000 }));
console.log('RESULTS ' + JSON.stringify(results));
process.exit(0);
