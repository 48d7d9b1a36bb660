package mock

import "github.com/retrylab/retrylab/internal/wire"

// ServedRoutes lists the requests the mock answers as attempts, one per
// wire format ("POST /v1/messages, ..."): what a client that reached the
// mock on another path is told.
func ServedRoutes() string { return wire.Routes() }
