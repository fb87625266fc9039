// Package deploy holds the production deployment: the worker image (Dockerfile and
// build-rootfs.sh) here, docker-compose.yml at the repository root, docs/deploy.md. It has
// no Go code; its tests check that the compose file has what the docs say and that the
// image builds from a static binary.
package deploy
