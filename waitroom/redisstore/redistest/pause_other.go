//go:build !unix

package redistest

import (
	"errors"
	"os"
)

func pause(*os.Process, bool) error {
	return errors.New("redistest: pausing a server needs unix signals")
}
