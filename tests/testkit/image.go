package testkit

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"

	"github.com/crashwall/chaos/container"
	"github.com/crashwall/chaos/spec"
)

// BuildAgentImage makes an agent image, tagged tag, with the Docker client from a
// context of three small files: FROM scratch, an /etc/passwd and an /etc/group that name
// nobody, and that make nobody a member of the Docker engine socket's group (so that a
// container which ever gave an agent its image's supplementary groups would show it).
// Everything else comes from the host at run time (agent.mounts).
func BuildAgentImage(tag string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := container.Dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	group := "root:x:0:\nnogroup:x:65534:\n"
	if fi, err := os.Stat(spec.DockerSocket()); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Gid != 0 && st.Gid != 65534 {
			group += "engine:x:" + strconv.Itoa(int(st.Gid)) + ":nobody\n"
		}
	}
	files := map[string]string{
		"Dockerfile": "FROM scratch\nCOPY passwd group /etc/\n",
		"passwd":     "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n",
		"group":      group,
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, name := range []string{"Dockerfile", "passwd", "group"} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(files[name])), ModTime: time.Unix(0, 0)})
		tw.Write([]byte(files[name]))
	}
	tw.Close()
	resp, err := c.API().ImageBuild(ctx, &buf, build.ImageBuildOptions{Tags: []string{tag}, Remove: true, ForceRemove: true, Version: build.BuilderV1})
	if err != nil {
		return fmt.Errorf("build the agent image: %w", err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	// The build's errors come in its JSON stream, not as an HTTP error.
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var msg struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&msg); err != nil {
			break
		}
		if msg.Error != "" {
			return fmt.Errorf("build the agent image: %s", msg.Error)
		}
	}
	return nil
}

// RemoveImage removes an image BuildAgentImage made.
func RemoveImage(tag string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if c, err := container.Dial(ctx); err == nil {
		c.API().ImageRemove(ctx, tag, image.RemoveOptions{Force: true, PruneChildren: true})
		c.Close()
	}
}
