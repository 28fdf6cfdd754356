package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func hello(_ context.Context, _ *app, _ url.Values) (reply, error) {
	return textReply("Hello World"), nil
}

func data(_ context.Context, _ *app, params url.Values) (reply, error) {
	n, err := intParam(params, "n", 0, 0, 1048576)
	if err != nil {
		return reply{}, err
	}
	return reply{contentType: "text/plain; charset=utf-8", body: bytes.Repeat([]byte("."), n)}, nil
}

func concat(_ context.Context, _ *app, params url.Values) (reply, error) {
	n, err := intParam(params, "n", 1000, 0, 10000000)
	if err != nil {
		return reply{}, err
	}
	// strings.Builder is Go's idiomatic "append to a string" (s += "s" copies the whole
	// string every time); it is deliberately not pre-sized so it grows like any append.
	var s strings.Builder
	for i := 0; i < n; i++ {
		s.WriteString("s")
	}
	return textReply(s.String()), nil
}

func add(_ context.Context, _ *app, params url.Values) (reply, error) {
	n, err := intParam(params, "n", 1000, 0, 100000000)
	if err != nil {
		return reply{}, err
	}
	counter := 0
	for i := 0; i < n; i++ {
		counter += 1
	}
	return textReply(strconv.Itoa(counter)), nil
}

func array(_ context.Context, _ *app, params url.Values) (reply, error) {
	n, err := intParam(params, "n", 1000, 0, 10000000)
	if err != nil {
		return reply{}, err
	}
	var list []string
	for i := 0; i < n; i++ {
		list = append(list, "s")
	}
	return textReply(strconv.Itoa(len(list))), nil
}

func assoc(_ context.Context, _ *app, params url.Values) (reply, error) {
	n, err := intParam(params, "n", 1000, 0, 10000000)
	if err != nil {
		return reply{}, err
	}
	m := map[string]string{}
	for i := 0; i < n; i++ {
		m["s"+strconv.Itoa(i)] = "s"
	}
	return textReply(strconv.Itoa(len(m))), nil
}

func readfile(_ context.Context, a *app, params url.Values) (reply, error) {
	n, err := intParam(params, "n", 100, 0, 100000)
	if err != nil {
		return reply{}, err
	}
	path := filepath.Join(a.cfg.fixturesDir, "demo.txt")
	total := 0
	for i := 0; i < n; i++ {
		// os.ReadFile opens, reads the whole file with blocking read(2) calls and closes it.
		content, err := os.ReadFile(path)
		if err != nil {
			return reply{}, err
		}
		total += len(content)
	}
	return textReply(strconv.Itoa(total)), nil
}

func sha256Chain(_ context.Context, a *app, params url.Values) (reply, error) {
	n, err := intParam(params, "n", 1, 1, 100000)
	if err != nil {
		return reply{}, err
	}
	// The contract wants the file read from disk once per request, never cached across requests.
	file, err := os.ReadFile(filepath.Join(a.cfg.fixturesDir, "random-64k.bin"))
	if err != nil {
		return reply{}, err
	}
	digest := sha256.Sum256(file)
	for i := 1; i < n; i++ {
		h := sha256.New()
		h.Write(digest[:])
		h.Write(file)
		h.Sum(digest[:0])
	}
	return textReply(hex.EncodeToString(digest[:])), nil
}
