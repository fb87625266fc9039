// Package verdicts is the end-to-end test of the verdict pipeline: a population of
// reference-agent trials whose true verdicts are known, the report in Chromium, and chaos
// diff (its tests are package verdicts_test).
package verdicts
