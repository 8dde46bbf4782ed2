// Package configs holds the shipped configuration files. Example is
// configs/waitroom.yaml, which shows every key with its default and a
// comment: `waitroom schema` takes each key's description and default from
// it, so the editor's hover and the documented file say the same.
package configs

import _ "embed"

// Example is waitroom.yaml as shipped.
//
//go:embed waitroom.yaml
var Example []byte
