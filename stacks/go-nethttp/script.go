package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
)

// runScript implements `server script WORKLOAD QUERY ITERATIONS`: the workload's handler runs
// ITERATIONS times in this process and the last body goes to stdout.
func runScript(a *app, args []string, out io.Writer) error {
	if len(args) != 3 {
		return fmt.Errorf("script wants WORKLOAD QUERY ITERATIONS, got %d arguments", len(args))
	}
	h, ok := workloads[args[0]]
	if !ok {
		return fmt.Errorf("script: unknown workload %q", args[0])
	}
	params, err := scriptParams(args[1])
	if err != nil {
		return err
	}
	iterations, err := strconv.Atoi(args[2])
	if err != nil || iterations < 1 {
		return fmt.Errorf("script: ITERATIONS must be a positive integer, got %q", args[2])
	}
	var last reply
	for i := 0; i < iterations; i++ {
		if last, err = h(context.Background(), a, params); err != nil {
			return fmt.Errorf("script %s %s: %w", args[0], args[1], err)
		}
	}
	_, err = out.Write(last.body)
	return err
}

// scriptParams parses QUERY ("n=1000", "" or "-" for none); a bare number is taken as n,
// which is how /data/{n} carries its size in the path.
func scriptParams(query string) (url.Values, error) {
	query = strings.TrimPrefix(query, "?")
	if query == "" || query == "-" {
		return url.Values{}, nil
	}
	if isDecimal(query) {
		return url.Values{"n": {query}}, nil
	}
	params, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("script: QUERY %q is not a query string: %w", query, err)
	}
	return params, nil
}
