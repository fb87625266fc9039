package mcpwall_test

import (
	"context"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/mcpwall"
	"github.com/crashwall/chaos/spec"
)

const exampleSpec = `name: example
task: Set the ticket's priority to urgent.
agent: {command: "true"}
tools:
  - name: update_ticket
    description: Sets one field of the ticket.
    effect: write
    key_field: field
    value_field: value
    input_schema:
      type: object
      properties: {field: {type: string}, value: {type: string}}
      required: [field, value]
    reply: '{"status": "updated"}'
  - name: get_ticket_field
    description: Reads one field of the ticket.
    effect: read
    key_field: field
    value_field: value
    input_schema:
      type: object
      properties: {field: {type: string}}
      required: [field]
initial_state: {priority: normal}
`

// A trial's hub with a fault armed, served to an MCP client as the wall, over the SDK's
// in-memory transports: the write is acknowledged and not stored (phantom_success), and
// the read that follows shows the world as it really is.
func Example() {
	ctx := context.Background()
	s, err := spec.Parse("example.yaml", []byte(exampleSpec))
	if err != nil {
		log.Fatal(err)
	}
	conds, err := faults.Generate(s)
	if err != nil {
		log.Fatal(err)
	}
	var cond faults.Condition
	for _, c := range conds {
		if c.ID == "phantom_success@update_ticket" {
			cond = c
		}
	}
	h, err := hub.NewHub(hub.Config{Spec: s, Condition: cond, Seed: 1, Trial: "example/1"})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close("the example is over")

	agentEnd, wallEnd := mcp.NewInMemoryTransports()
	if _, err := mcpwall.NewServer(h, "mcp").Connect(ctx, wallEnd, nil); err != nil {
		log.Fatal(err)
	}
	agent := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
	session, err := agent.Connect(ctx, agentEnd, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()
	for _, call := range []mcp.CallToolParams{
		{Name: "update_ticket", Arguments: map[string]any{"field": "priority", "value": "urgent"}},
		{Name: "get_ticket_field", Arguments: map[string]any{"field": "priority"}},
	} {
		res, err := session.CallTool(ctx, &call)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %s\n", call.Name, res.Content[0].(*mcp.TextContent).Text)
	}
	fmt.Println(cond.What)
	// Output:
	// update_ticket: {"status": "updated"}
	// get_ticket_field: {"field":"priority","value":"normal"}
	// the first call to update_ticket: answered success, nothing stored
}
