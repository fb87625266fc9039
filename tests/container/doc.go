// Package container holds the tests of agent.runtime: docker (issue 15): an agent in a
// container reaches the wall, the model proxy and its sandbox, and nothing else; the
// reference agents and a real OpenAI Agents SDK agent give the same verdicts inside as
// outside; no container outlives its trial, whatever ends it. They need a Docker engine
// (scripts/setup starts one); with CHAOS_REQUIRE_DOCKER set (CI) a missing engine fails
// them instead of skipping them. The agent's image is made here, with the Docker client,
// FROM scratch: the host's /usr, /lib, /bin and /etc/ssl are mounted into it read-only
// (agent.mounts), so the host's sh and node run inside (docs/deploy.md).
package container
