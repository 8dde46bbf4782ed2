package main

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/waitroom/waitroom/configs"
)

// keyDoc is what the schema says of one key for an editor's hover: its
// description and its default. A key without a default says why in
// noDefault.
type keyDoc struct {
	description string
	def         any
	hasDefault  bool
	noDefault   string
}

// schemaExtra documents the keys configs/waitroom.yaml shows only inside
// comments (a template's keys, a webhook's), in the words and with the
// defaults written there.
var schemaExtra = map[string]keyDoc{
	"rooms.*.max_rooms":    {description: "a template's rooms in use at once, all instances; past it 503", def: 1000, hasDefault: true},
	"rooms.*.idle_after":   {description: "a template's empty room unvisited this long is forgotten; its store keys expire", def: "1h", hasDefault: true},
	"rooms.*.create_limit": {description: "a template's rooms one client network may make, all instances; past it 429 (a room counts toward max_rooms once a visitor returns with its ticket)", def: "10/m", hasDefault: true},
	"rooms.*.allow":        {description: "a template's only rooms (names it fills, e.g. event-1001); any other id gets 404 and makes nothing", noDefault: "optional: without it a template fills any id within max_rooms and create_limit"},
	"webhooks.url":         {description: "where the events are posted: an http or https URL", noDefault: "required: the site's receiver"},
	"webhooks.events":      {description: "the event types sent to it: queue.started, queue.drained, room.mode_changed, room.closed, visitor.admitted", noDefault: "required: at least one event"},
	"webhooks.secret":      {description: "whsec_ and base64 of 24 to 64 random bytes, the Standard Webhooks signing key (use ${ENV})", noDefault: "required: a secret of the site's"},
}

// noDefault names the keys whose value in configs/waitroom.yaml is an
// example, not a default, and why they have none.
var noDefault = map[string]string{
	"upstreams.*.url": "required: the site's URL",
	"routes.path":     "required: the path prefix the route matches",
	"routes.upstream": "required: the upstream the route forwards to",
	"routes.room":     "optional: a route without a room goes straight through",
	"routes":          "the site's own routes",
}

// schemaDocs reads each key's description (its line comment) and default
// (its value) from configs/waitroom.yaml, by the key's path with "*" for a
// room or upstream name (mapPaths: the paths whose keys are names).
func schemaDocs(mapPaths map[string]bool) (map[string]keyDoc, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(configs.Example, &root); err != nil {
		return nil, fmt.Errorf("configs/waitroom.yaml: %w", err)
	}
	docs := map[string]keyDoc{}
	var walk func(n *yaml.Node, path string) error
	walk = func(n *yaml.Node, path string) error {
		switch n.Kind {
		case yaml.DocumentNode:
			return walk(n.Content[0], path)
		case yaml.SequenceNode:
			for _, item := range n.Content {
				if item.Kind == yaml.MappingNode {
					if err := walk(item, path); err != nil {
						return err
					}
				}
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				name := k.Value
				if mapPaths[path] {
					name = "*"
				}
				p := joinKey(path, name)
				d := docs[p]
				if d.description == "" {
					d.description = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(k.LineComment+v.LineComment), "#"))
				}
				if v.Kind != yaml.MappingNode && !d.hasDefault {
					if err := v.Decode(&d.def); err != nil {
						return fmt.Errorf("configs/waitroom.yaml: %s: %w", p, err)
					}
					d.hasDefault = true
				}
				docs[p] = d
				if err := walk(v, p); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(&root, ""); err != nil {
		return nil, err
	}
	for p, d := range schemaExtra {
		docs[p] = d
	}
	for p, why := range noDefault {
		d := docs[p]
		d.def, d.hasDefault, d.noDefault = nil, false, why
		docs[p] = d
	}
	return docs, nil
}
