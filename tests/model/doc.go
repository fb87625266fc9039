// Package model holds the tests of the model layer with real clients: the `openai` and
// `@anthropic-ai/sdk` npm packages pointed at the model proxy in front of the stand-in
// model, and an agent built on the OpenAI Agents SDK for JavaScript run by `chaos run`
// with a model fault and without, paired on the same seeds. The clients live in
// tests/js; node and its packages (npm ci in tests/js) are required, never skipped.
package model
