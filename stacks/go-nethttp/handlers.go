package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// reply is what a workload produces; the HTTP server and the script entry point both
// consume it, so each workload is implemented exactly once.
type reply struct {
	contentType string
	body        []byte
}

// workloadError carries the HTTP status a failure maps to (400 bad input, 503 missing service).
type workloadError struct {
	status  int
	message string
}

func (e *workloadError) Error() string { return e.message }

func badRequest(format string, args ...any) error {
	return &workloadError{status: http.StatusBadRequest, message: fmt.Sprintf(format, args...)}
}

func unavailable(format string, args ...any) error {
	return &workloadError{status: http.StatusServiceUnavailable, message: fmt.Sprintf(format, args...)}
}

// handler runs one workload for one request. params holds the query string (and, for
// /data/{n}, the path value as "n").
type handler func(ctx context.Context, app *app, params url.Values) (reply, error)

func textReply(body string) reply {
	return reply{contentType: "text/plain; charset=utf-8", body: []byte(body)}
}

// workloads maps each workload name of docs/contracts.md section 1 to its handler.
var workloads = map[string]handler{
	"hello":        hello,
	"data":         data,
	"concat":       concat,
	"add":          add,
	"array":        array,
	"assoc":        assoc,
	"readfile":     readfile,
	"sha256":       sha256Chain,
	"db-report":    dbReport,
	"mysql-row":    mysqlRow,
	"redis-get":    redisGet,
	"memcache-get": memcacheGet,
	"json":         tfbJSON,
	"plaintext":    tfbPlaintext,
	"db":           tfbDB,
	"queries":      tfbQueries,
	"fortunes":     tfbFortunes,
	"updates":      tfbUpdates,
}
