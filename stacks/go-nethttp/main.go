// Command server is the go-nethttp stack: the stackbench workloads on Go's standard
// net/http server. "server" serves HTTP; "server script WORKLOAD QUERY ITERATIONS" runs a
// workload in-process for standalone timing (docs/contracts.md section 5).
package main

import (
	"fmt"
	"os"
	"runtime"
)

// app bundles what handlers need: the configuration and the data-store clients.
type app struct {
	cfg      config
	services *services
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "go-nethttp:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	// One scheduler thread per server core the orchestrator gave us (WORKERS).
	if cfg.workers > 0 {
		runtime.GOMAXPROCS(cfg.workers)
	}
	svc, err := newServices(cfg)
	if err != nil {
		return err
	}
	defer svc.close()
	a := &app{cfg: cfg, services: svc}
	if len(args) > 0 && args[0] == "script" {
		return runScript(a, args[1:], os.Stdout)
	}
	if len(args) > 0 {
		return fmt.Errorf("unknown arguments %q (usage: server | server script WORKLOAD QUERY ITERATIONS)", args)
	}
	return serve(a)
}
