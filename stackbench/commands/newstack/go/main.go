// A hello endpoint for stackbench: it answers GET /hello with "Hello World" on HOST:PORT,
// which stackbench sets (docs/contracts.md sections 1 and 3).
package main

import (
	"log"
	"net"
	"net/http"
	"os"
)

func main() {
	http.HandleFunc("/hello", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("Hello World"))
	})
	addr := net.JoinHostPort(os.Getenv("HOST"), os.Getenv("PORT"))
	log.Fatal(http.ListenAndServe(addr, nil))
}
