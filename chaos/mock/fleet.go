package mock

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/retrylab/retrylab/chaos/redact"
)

// How the mock tells a fleet's clients apart: each client is given its own
// API key, FleetKey(i), and every wire format sends its key (x-api-key,
// Authorization: Bearer, x-goog-api-key, ?key=). The mock maps the key to
// the client's index and journals the index ("client": 7), never the key;
// the runner scrubs every key a client sent from the run folder as it
// always does. A request without a fleet key belongs to no client (0):
// its attempts are numbered among the other keyless ones.

// fleetKeyPrefix begins every fleet client's API key.
const fleetKeyPrefix = "sk-retrylab-fleet-"

// FleetKey is the API key fleet client i (1-based) is given.
func FleetKey(i int) string { return fmt.Sprintf("%s%04d", fleetKeyPrefix, i) }

// FleetClientOf returns the client whose key is key, 0 when key is no
// fleet key or names no client of a fleet of n.
func FleetClientOf(key string, n int) int {
	rest, ok := strings.CutPrefix(key, fleetKeyPrefix)
	if !ok || len(rest) != 4 {
		return 0
	}
	i, err := strconv.Atoi(rest)
	if err != nil || i < 1 || i > n {
		return 0
	}
	return i
}

// fleetClient is the client that sent req (body its body): the first key
// it carries that is a fleet key; 0 outside a fleet or without one.
func (e *Env) fleetClient(req *http.Request, body []byte) int {
	if e.cfg.Fleet <= 1 {
		return 0
	}
	for _, v := range redact.RequestSecrets(req, body) {
		if i := FleetClientOf(v, e.cfg.Fleet); i > 0 {
			return i
		}
	}
	return 0
}
