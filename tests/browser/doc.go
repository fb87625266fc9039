// Package browser tests the browser wall (proxies/cdpwall) from outside: `chaos run` on
// the embedded Temporal server starts Debian's Chromium behind the CDP guard in each
// trial, a reference agent (tests/js/browser-agent.mjs, playwright-core over {cdp_url})
// drives the test site (tests/browser/site) in the test's own process, and the verdicts,
// the record and every file the run wrote are read back.
package browser
